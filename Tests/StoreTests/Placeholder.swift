import Testing
@Test func placeholderStoreTests() { #expect(Bool(true)) }
