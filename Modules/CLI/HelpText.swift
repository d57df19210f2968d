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
    case "upload": return upload
    case "status": return status
    case "watch": return watch
    case "articles": return articles
    case "records": return records
    case "outbox": return outbox
    case "sync": return sync
    case "help": return "USAGE: courier help [COMMAND]\n\nShows the help of a command.\n"
    case "completions":
      return """
        USAGE: courier completions bash|zsh|fish

        Prints the shell's completion script, generated from the table the parser uses.
        scripts/install puts them where each shell looks.

        """
    case "manpage":
      return "USAGE: courier manpage\n\nPrints courier(1) in roff, from the same table.\n"
    default: return nil
    }
  }

  static let globalOptions = """
    GLOBAL OPTIONS:
      --base-url URL        the server (default http://127.0.0.1:8080; env COURIER_BASE_URL)
      --config FILE         a JSON config file (default $XDG_CONFIG_HOME/courier/config.json)
      --data-dir DIR        where the session and outbox live (env COURIER_DATA_DIR)
      --transport NAME      curl, urlsession or memory (env COURIER_TRANSPORT)
      --timeout SECONDS     deadline of one attempt, 1 to 86400 (default 30)
      --max-attempts N      attempts in all for a transient failure, 1 to 100 (default 4)
      --conflict-policy POLICY
                            lastWriteWins (default), serverWins, manual or merge: how a version
                            conflict is settled when a write is sent (env COURIER_CONFLICT_POLICY)
      --json                print one JSON object per line, for scripts
      --verbose, -v         show each request and retry decision on standard error
      --help, -h            show help
    """

  static let overview = """
    courier: talk to your server over bad networks, without losing anything.

    USAGE: courier [GLOBAL OPTIONS] COMMAND [ARGUMENTS]
           courier --version [--json]   the version and the adapters of this build

    COMMANDS:
      login      log in and keep the session in the data directory
      logout     forget the session
      get        send a GET through the whole pipeline and print the body
      upload     compress a photo and send it as multipart/form-data, with progress
      status     print the network path now, and why
      watch      print every change of the network path until interrupted
      articles   list, add, edit or delete articles (offline first)
      records    list, show, add, edit or delete the records of a declared collection
      outbox     show writes waiting to be sent, refused, or in conflict
      sync       send waiting writes now (or whenever the network returns, with --watch)
      help       show the help of a command

    \(globalOptions)

    EXIT CODES: 0 success, 64 usage, 65 refused by the server, 66 missing input file,
      69 offline or host unreachable, 70 unexpected failure, 73 the data folder or local store
      cannot be created, 74 the local store cannot be read or written, 75 transient failure
      after retries (or another courier is syncing this data folder), 76 bad reply, 77 not
      logged in or session expired, 78 bad configuration.
    """ + "\n"

  static let login = """
    USAGE: courier login --username USER [--password-stdin | --password PASSWORD]

    Logs in with POST /auth/token and keeps the tokens in DATA_DIR/session.json (mode 0600).
    The password comes from the first line of standard input (--password-stdin), from the
    COURIER_PASSWORD environment variable, or from --password, which other users can read in
    the process list (courier warns): prefer --password-stdin.

    EXAMPLE:
      printf '%s\\n' "$PASSWORD" | courier login --username alice --password-stdin

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
    backoff, error classification) and prints the body, or the reason it failed. A full URL
    is accepted only on the base URL's server (same scheme, host and port): the session's
    token is never sent anywhere else; use --base-url for another server.

    \(globalOptions)
    """ + "\n"

  static let upload = """
    USAGE: courier upload FILE [--title T] [--field NAME=VALUE]... [--to URL]
                          [--max-pixels N] [--quality Q] [--no-compress] [--resumable]
                          [--queue]

    Downsamples and compresses an image (JPEG, quality 70, long edge 2048 px, EXIF orientation
    applied, metadata and GPS removed), then sends it as multipart/form-data to BASE_URL/photos
    (or --to URL), streamed from disk, with retries that never create a second photo. A file
    that is not an image is sent as is. FILE must be a regular file (not a folder, a pipe or
    a device). On a terminal: a progress bar and a line per retry.
    With --json: one JSON object per event, then the result.

    With --resumable (or "resumable_uploads": true in the config file), the file (compressed
    first, as above) goes with the tus 1.0.0 protocol to BASE_URL/uploads (or --to URL, any tus
    server; the session's token goes only to the base URL's server) in checksummed chunks
    (4 MiB, then about a quarter second of the link's rate each, 1 to 256 MiB). Interrupted,
    even by kill -9, the same command with the same file asks the server
    how much it has and sends only the rest ("resumed at" / "resumed_at" with --json); a
    changed file starts over. The resume state lives in the data folder until the server
    confirms the last byte.

    With --queue, nothing is sent now, and no network is needed: the file is compressed (as
    above), the exact bytes to send are kept in the data folder with an outbox entry, and the
    command prints the entry and returns ({"status":"queued","id":...} with --json).
    `courier sync`, `courier sync --watch` and courier-tui send it in outbox order with the
    other writes, under one Idempotency-Key for its whole life: with tus when --resumable is
    given (or configured) or when the target answers as a tus server (an interruption, even
    kill -9, resumes where the server stopped), else as multipart. `courier outbox` shows the
    bytes the server confirmed; the kept bytes go once the server confirms, or with
    `courier outbox discard` for an upload it refused.

    OPTIONS:
      --title T             the photo's title (default: the file's name)
      --field NAME=VALUE    an extra text field (repeatable)
      --to URL              the target (default BASE_URL/photos), on the base URL's server
      --max-pixels N        the longest edge after downsampling (default 2048)
      --quality Q           JPEG quality, 1-100 or 0.01-1.0 (default 70)
      --no-compress         send the file as is
      --resumable           resumable upload with tus 1.0.0 (resumes after kill -9)
      --queue               queue it in the outbox and return at once; 'courier sync' sends it

    \(globalOptions)
    """ + "\n"

  static let status = """
    USAGE: courier status [--json]

    Prints the network path once (satisfied, unsatisfied, requiresConnection or unknown) and
    why: each interface, its addresses and whether a default route goes through it.

    \(globalOptions)
    """ + "\n"

  static let watch = """
    USAGE: courier watch [--json]

    Prints every change of the network path, one line each with a timestamp and the monitor's
    generation, until interrupted (SIGINT or SIGTERM end it cleanly).

    \(globalOptions)
    """ + "\n"

  static let articles = """
    USAGE: courier articles list [--offline] [--json]
           courier articles add --title T [--body B]
           courier articles edit ID [--title T] [--body B]
           courier articles delete ID

    The local store is the source of truth. `list` prints the cached articles at once (marked
    with their age), then refreshes them (unless --offline); a failed refresh keeps the cache.
    `add`, `edit` and `delete` apply the change locally, queue it in the outbox, try to send it,
    and print what is still pending; a write queued while offline exits 0 (it is saved).
    With --json, `list` prints a {"source":"cache",...} line, then a {"source":"network",...}
    line (with "error" when the refresh failed, the exit code then says why).

    \(globalOptions)
    """ + "\n"

  static let records = """
    USAGE: courier records COLLECTION list [--offline] [--json]
           courier records COLLECTION show ID
           courier records COLLECTION add [--id ID] [--field NAME=VALUE]... [--data JSON]
           courier records COLLECTION edit ID [--field NAME=VALUE]... [--data JSON] [--remove NAME]...
           courier records COLLECTION delete ID
    (or with the subcommand first: courier records list COLLECTION, ...)

    The records of a collection the config file declares under "collections" (and of
    articles, as JSON), offline first like `courier articles`: `list` prints the cache at once,
    then refreshes it (unless --offline); `show` prints one record as stored here, with its
    version and whether it waits to be sent; `add`, `edit` and `delete` apply the change
    locally, queue it in the same outbox as every other write, try to send it, and print what is
    still pending.

    Fields: --data gives them as one JSON object ('{"text":"hi","tags":["a"]}'); each
    --field NAME=VALUE then sets one, read as the collection declares it (a string as is, a
    number or true/false by its spelling, a list of strings split at commas: tags=a,b, any JSON
    for a json field). A write is checked against the declaration before it is saved: a
    missing required field, a field of the wrong kind or one the collection does not have is
    refused (exit 64) and nothing is queued. `edit` keeps the fields it does not name;
    --remove takes one out.

    A collection in the config file (every member but the name is optional; these are the
    defaults of the backend contract unless shown otherwise):
      "collections": {
        "notes": {"path": "/notes", "id": "note_id", "version": "rev",
                  "updated_at": "modified_at", "fields": {"text": "string", "tags": "strings"},
                  "required": ["text"], "version_tag": "r"}
      }
    Field kinds: string, integer, number, boolean, strings, json. Also "conflict_codes",
    "gone_codes" (the error codes of a stale version and of a record already gone),
    "write_statuses" and "delete_statuses" (the 2xx that prove a write).

    Exit codes: 0 done (a write that could not be sent yet is kept pending), 64 usage (also
    an unknown collection or fields that do not fit it), 65 refused by the server, 66 no such
    record here, 69 offline, 73/74 the local store could not be used.

    \(globalOptions)
    """ + "\n"

  static let outbox = """
    USAGE: courier outbox [--json]
           courier outbox retry ID|--all [--json]
           courier outbox discard ID [--json]

    Lists the writes waiting to be sent, those the server refused (with its message), and
    those in conflict with the server's version. ID is the entry's number (#3 or 3) or its
    operation id (shown with --json). A queued upload (`courier upload --queue`) shows the
    bytes the server confirmed of its total ("upload" with --json).

    `retry` puts a refused or conflicted entry (every one with --all) back in the queue under a
    new Idempotency-Key (the server keeps its answer under the old one), rebased on the
    server's version for a conflict, then sends the queue. `discard` drops the entry with every
    local change to its record (an article, or a record of a declared collection) and shows
    the server's copy again (for a queued upload: the entry and the bytes kept for it). The
    outbox holds every collection's writes, in one order.

    Exit codes: 0 done (a retry that could not be sent yet is kept pending), 64 usage,
    65 no such entry or refused again, 73/74 the local store could not be used, 75 another
    courier is syncing this data folder.

    \(globalOptions)
    """ + "\n"

  static let sync = """
    USAGE: courier sync [--watch] [--json]

    Sends the waiting writes now, in order, and reports what was sent, refused, in conflict or
    still pending: every collection's (articles and those the config file declares). With
    --watch it stays running and replays whenever the network returns, until SIGINT or SIGTERM.
    Version conflicts follow --conflict-policy (or conflict_policy in the config file, or
    COURIER_CONFLICT_POLICY): lastWriteWins (default: the newer write wins the whole record),
    serverWins, manual (kept in the outbox for you), or merge (field by field against the copy
    the edit started from: fields only one side changed keep that side's value; fields both
    changed go to the newer write).

    Writes go one at a time, in the outbox's order. With replay_concurrency N in the config file
    (or COURIER_REPLAY_CONCURRENCY, 1 to 16), writes of different records go N at a time over N
    connections: each record's writes keep their order, the order across records is lost.

    One courier at a time syncs a data folder (a lock, sync.lock, in it): while another one
    does, `sync` exits 75 at once saying which process (pid) and what it runs, and nothing is
    sent twice; `articles add/edit/delete` and `outbox retry` save the write and leave the
    sending to it.

    \(globalOptions)
    """ + "\n"
}
