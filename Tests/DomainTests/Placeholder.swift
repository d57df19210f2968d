import Testing
@Test func placeholderDomainTests() { #expect(Bool(true)) }
