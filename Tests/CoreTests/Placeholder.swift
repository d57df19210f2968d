import Testing
@Test func placeholderCoreTests() { #expect(Bool(true)) }
