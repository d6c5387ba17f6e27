// Commands other than `serve` open the store like the hub does, and the store logs its opening at `info`; on a
// command's terminal that line is noise around the one line the command means to print. They log warnings and
// worse only (`serve` bootstraps logging itself, at `log.level`).
import Logging

enum CommandLogging {
    /// Sends warnings and worse to standard error; call once, first thing in a command's `run`.
    static func bootstrap() {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
    }
}
