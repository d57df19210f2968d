import CourierDomain
import CourierPorts
import CourierSystem
import Logging

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension TransportOptions {
  /// The call's options, its logger given a `courier.request.id` when it logs anything and has
  /// none yet (a caller's own id, or the retry step's, is kept): what the first step a call
  /// meets does (decision 2203).
  /// - Returns: the options to pass on.
  package func identifyingCall() -> TransportOptions {
    guard logger.logs(.info), logger[metadataKey: CourierLogKey.requestID] == nil else {
      return self
    }
    var identified = self
    identified.logger[metadataKey: CourierLogKey.requestID] = CourierLogKey.newRequestID()
    return identified
  }

  /// One attempt's options: the call's, its logger with `courier.attempt` for the exchange
  /// lines below it.
  /// - Parameter number: the attempt, from 1.
  /// - Returns: the options to pass on.
  package func forAttempt(_ number: Int) -> TransportOptions {
    guard logger.logs(.debug) else { return self }
    var options = self
    options.logger[metadataKey: CourierLogKey.attempt] = "\(number)"
    return options
  }
}

extension TransportOptions {
  /// The options of the sends of one outbox entry: the logger with the entry's
  /// `courier.operation.id` and `courier.collection`, so every line of its exchanges names them.
  /// - Parameter entry: the entry.
  /// - Returns: the options to send it with.
  package func forEntry(_ entry: OutboxEntry) -> TransportOptions {
    guard logger.logs(.info) else { return self }
    var options = self
    options.logger[metadataKey: CourierLogKey.operationID] = "\(entry.id.uuidString.lowercased())"
    options.logger[metadataKey: CourierLogKey.collection] =
      "\(LogText.escaped(entry.key.collection))"
    return options
  }
}
