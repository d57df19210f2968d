import Testing
@Test func placeholderNetlinkTests() { #expect(Bool(true)) }
