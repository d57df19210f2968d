import Testing
@Test func placeholderVipsTests() { #expect(Bool(true)) }
