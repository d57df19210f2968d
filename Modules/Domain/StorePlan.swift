#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Mutations to commit together and the value to return once they are.
public struct StorePlan<Result: Sendable>: Sendable {
  /// The mutations, applied in order, all or nothing.
  package var mutations: [StoreMutation]
  /// What the operation returns after the commit.
  package var result: Result

  /// Creates a plan.
  /// - Parameters:
  ///   - mutations: the mutations.
  ///   - result: the result.
  package init(_ mutations: [StoreMutation], result: Result) {
    self.mutations = mutations
    self.result = result
  }
}
