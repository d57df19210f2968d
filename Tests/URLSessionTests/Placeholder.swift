import Testing
@Test func placeholderURLSessionTests() { #expect(Bool(true)) }
