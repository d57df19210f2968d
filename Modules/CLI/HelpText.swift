/// The help of each command.
public enum HelpText {
  /// The help for a topic.
  /// - Parameter topic: a command name, or nil for the overview.
  /// - Returns: the text, or nil for an unknown topic.
  public static func text(for topic: String?) -> String? {
    switch topic {
    case nil: return overview
    case "login": return login
    case "logout": return logout
    case "get": return get
    case "help": return "USAGE: courier help [COMMAND]\n\nShows the help of a command.\n"
    default: return nil
    }
  }

  static let globalOptions = """
    GLOBAL OPTIONS:
      --base-url URL        the server (default http://127.0.0.1:8080; env COURIER_BASE_URL)
      --config FILE         a JSON config file (default $XDG_CONFIG_HOME/courier/config.json)
      --data-dir DIR        where the session and outbox live (env COURIER_DATA_DIR)
      --transport NAME      urlsession or memory (env COURIER_TRANSPORT)
      --timeout SECONDS     deadline of one attempt (default 30)
      --max-attempts N      attempts in all for a transient failure (default 4)
      --json                print one JSON object per line, for scripts
      --verbose, -v         show each request and retry decision on standard error
      --help, -h            show help
    """

  static let overview = """
    courier: talk to your server over bad networks, without losing anything.

    USAGE: courier [GLOBAL OPTIONS] COMMAND [ARGUMENTS]

    COMMANDS:
      login      log in and keep the session in the data directory
      logout     forget the session
      get        send a GET through the whole pipeline and print the body
      help       show the help of a command

    \(globalOptions)

    EXIT CODES: 0 success, 64 usage, 65 refused by the server, 66 missing input file,
      69 offline or host unreachable, 75 transient failure after retries, 76 bad reply,
      77 not logged in or session expired, 78 bad configuration.
    """ + "\n"

  static let login = """
    USAGE: courier login --username USER [--password PASSWORD | --password-stdin]

    Logs in with POST /auth/token and keeps the tokens in DATA_DIR/session.json (mode 0600).
    Without --password, the password comes from standard input (--password-stdin) or from
    the COURIER_PASSWORD environment variable.

    \(globalOptions)
    """ + "\n"

  static let logout = """
    USAGE: courier logout

    Forgets the session kept by `courier login`.

    \(globalOptions)
    """ + "\n"

  static let get = """
    USAGE: courier get PATH [--json]

    Sends GET PATH (relative to the base URL) through the whole pipeline (auth, retries with
    backoff, error classification) and prints the body, or the reason it failed.

    \(globalOptions)
    """ + "\n"
}
