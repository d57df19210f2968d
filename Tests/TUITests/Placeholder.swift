import Testing
@Test func placeholderTUITests() { #expect(Bool(true)) }
