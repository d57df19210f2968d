import CourierDomain

/// The phase of a photo upload.
package enum UploadPhase: Sendable, Hashable {
  /// Making the photo smaller before sending it.
  case compressing
  /// Sending bytes.
  case uploading
  /// Waiting before another attempt.
  case retrying(attempt: Int, delay: Duration)
  /// Done.
  case succeeded
  /// Given up, with the message for a person.
  case failed(message: String)
}
