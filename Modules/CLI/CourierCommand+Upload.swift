import ArgumentParser
import CourierDomain

extension CourierCommand {
  /// `courier upload FILE ...`.
  package struct Upload: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "upload",
      abstract: "Compress a photo and send it as multipart/form-data, with progress.",
      usage: """
        courier upload <file> [--title <t>] [--field <name=value>]... [--to <url>]
          [--max-pixels <n>] [--quality <q>] [--no-compress] [--resumable] [--interop <n>]
          [--queue] [--allow-expensive]
          [<global options>]
        """,
      discussion: """
        Downsamples and compresses an image (JPEG, quality 70, long edge 2048 px, EXIF \
        orientation applied, metadata and GPS removed), then sends it as multipart/form-data \
        to BASE_URL/photos (or --to URL), streamed from disk, with retries that never create a \
        second photo. A file that is not an image is sent as is. FILE must be a regular file \
        (not a folder, a pipe or a device). On a terminal: a progress bar and a line per \
        retry. With --json: one JSON object per event, then the result. A server that speaks \
        the IETF resumable uploads draft (interop versions 3 to 8) can make this upload \
        resumable by answering 104 with its address: an interrupted transfer then sends only \
        the rest, in the same run or, after kill -9, when the same command runs again. Interop \
        8 is offered first; a server that refuses it and names the versions it takes gets the \
        highest both speak, and the choice is said ("interop" with --json). --interop N (or \
        "ietf_interop_version" in the config file) speaks N only. A resumed upload speaks the \
        version it was created with.

        With --resumable (or "resumable_uploads": true in the config file), the server is \
        asked what it offers, and the choice is said: "resumable (IETF draft, interop 8)" \
        sends the form to BASE_URL/photos as above; "resumable (tus 1.0.0)" sends the file \
        (compressed first, as above) with the tus 1.0.0 protocol to BASE_URL/uploads (or \
        --to URL, any tus server; the session's token goes only to the base URL's server) in \
        checksummed chunks (4 MiB, then about a quarter second of the link's rate each, 1 to \
        256 MiB). Interrupted, even by kill -9, the same command with the same file asks the \
        server how much it has and sends only the rest ("resumed at" / "resumed_at" with \
        --json); a changed file starts over. The resume state lives in the data folder until \
        the server confirms the last byte.

        With --queue, nothing is sent now, and no network is needed: the file is compressed \
        (as above), the exact bytes to send are kept in the data folder with an outbox entry, \
        and the command prints the entry and returns ({"status":"queued","id":...} with \
        --json). `courier sync`, `courier sync --watch` and courier-tui send it in outbox \
        order with the other writes, under one Idempotency-Key for its whole life: with tus \
        when --resumable is given (or configured); otherwise, for an image, as the IETF \
        draft's form when the form's target offers it, with tus when the target answers as a \
        tus server (a file that is not an image asks tus first: the form takes images) (an \
        interruption, even kill -9, resumes where the server stopped either way), else as \
        multipart. \
        `courier outbox` shows the bytes the server confirmed; the kept bytes go once the \
        server confirms, or with `courier outbox discard` for an upload it refused.
        """ + "\n\n" + CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// The file to send.
    @Argument(help: ArgumentHelp("The file to send.", valueName: "file"), completion: .file())
    package var file: String

    /// `--title`.
    @Option(
      parsing: .unconditional,
      help: ArgumentHelp("The photo's title (default: the file's name).", valueName: "t"))
    package var title: String?

    /// `--field NAME=VALUE`, repeatable.
    @Option(
      parsing: .unconditionalSingleValue,
      help: ArgumentHelp("An extra text field (repeatable).", valueName: "name=value"))
    package var field: [String] = []

    /// `--to URL`.
    @Option(
      name: .customLong("to"), parsing: .unconditional,
      help: ArgumentHelp(
        "The target (default BASE_URL/photos), on the base URL's server.", valueName: "url"))
    package var target: String?

    /// `--max-pixels N`.
    @Option(
      name: .customLong("max-pixels"), parsing: .unconditional,
      help: ArgumentHelp("The longest edge after downsampling (default 2048).", valueName: "n"))
    package var maxPixels: String?

    /// `--quality Q`.
    @Option(
      parsing: .unconditional,
      help: ArgumentHelp("JPEG quality, 1-100 or 0.01-1.0 (default 70).", valueName: "q"))
    package var quality: String?

    /// `--no-compress`.
    @Flag(name: .customLong("no-compress"), help: "Send the file as is.")
    package var noCompress = false

    /// `--resumable`.
    @Flag(
      help:
        "Resumable upload, IETF draft or tus 1.0.0 as the server offers (resumes after kill -9).")
    package var resumable = false

    /// `--interop N`.
    @Option(
      parsing: .unconditional,
      help: ArgumentHelp(
        "The IETF draft's interop version to speak, 3 to 8 (default: 8, lower if refused).",
        valueName: "n"))
    package var interop: String?

    /// `--queue`.
    @Flag(help: "Queue it in the outbox and return at once; 'courier sync' sends it.")
    package var queue = false

    /// `--allow-expensive`.
    @Flag(
      name: .customLong("allow-expensive"),
      help: "A queued upload may go over a metered network (it waits for another by default).")
    package var allowExpensive = false

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    package func validate() throws { _ = try options() }

    /// The options as `UploadCommand` takes them, each value checked.
    /// - Returns: the options.
    /// - Throws: `ValidationError` in the words of the value that is wrong.
    package func options() throws -> UploadOptions {
      var upload = UploadOptions(file: file)
      upload.title = title
      upload.target = target
      upload.noCompress = noCompress
      upload.resumable = resumable
      upload.queue = queue
      upload.allowExpensive = allowExpensive
      for field in field {
        let (name, value) = try FieldAssignment.split(field)
        upload.fields.append(UploadOptions.Field(name: name, value: value))
      }
      if let pixels = maxPixels {
        guard let value = Int(pixels), (16...65_536).contains(value) else {
          throw ValidationError("--max-pixels takes a whole number from 16 to 65536.")
        }
        upload.maxPixels = value
      }
      if let quality {
        // Accept both the seed's 0.7 and libjpeg's 70.
        if let value = Double(quality), value >= 0.01, value <= 1,
          quality.contains(where: { $0 == "." })
        {
          upload.quality = Int((value * 100).rounded())
        } else if let value = Int(quality), (1...100).contains(value) {
          upload.quality = value
        } else {
          throw ValidationError("--quality takes 1 to 100 (or 0.01 to 1.0).")
        }
      }
      if let interop {
        guard let version = Int(interop).flatMap(IETFInterop.init) else {
          throw ValidationError(
            "--interop takes an interop version of the IETF resumable uploads draft that "
              + "Courier speaks, 3 to 8, not “\(interop)”.")
        }
        upload.interop = version
      }
      if upload.noCompress && (upload.maxPixels != nil || upload.quality != nil) {
        throw ValidationError("--no-compress cannot be combined with --max-pixels or --quality.")
      }
      return upload
    }

    /// True without `--queue`: the upload is sent now, and nothing is kept to send later.
    package var queuesNothing: Bool { !queue }

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await UploadCommand.run(try options(), context: context)
    }
  }
}

/// `--field NAME=VALUE` of `upload` and `records`.
enum FieldAssignment {
  /// Splits at the first `=`; the name may not be empty.
  /// - Parameter text: the flag's value.
  /// - Returns: the name and the value.
  /// - Throws: `ValidationError` when there is no `=` or no name.
  static func split(_ text: String) throws -> (name: String, value: String) {
    guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
      throw ValidationError("--field takes NAME=VALUE, not “\(text)”.")
    }
    return (String(text[..<equals]), String(text[text.index(after: equals)...]))
  }
}
