// Why this exists: when a test that runs the real `cairn` binary fails, the useful evidence is what the server
// printed. These errors carry the captured output so a failing CI log shows the server's side of the story.

/// Errors from `TestServerProcess`.
public enum TestServerError: Error, CustomStringConvertible {
    /// No `cairn` executable was found near the test binary.
    case executableNotFound(searched: [String])
    /// `Process.run()` failed.
    case launchFailed(executable: String, reason: String)
    /// The expected output line did not appear: the process exited (`exitStatus` set) or time ran out.
    case lineNotFound(text: String, exitStatus: Int32?, output: String)
    /// The process did not exit within the timeout.
    case exitTimeout(seconds: Double, output: String)
    /// The "listening on" line was found but held no port number.
    case unparsableListeningLine(String)

    public var description: String {
        switch self {
        case .executableNotFound(let searched):
            return "build the cairn executable first (swift build); no executable named cairn in or above: "
                + searched.joined(separator: ", ")
        case .launchFailed(let executable, let reason):
            return "could not launch \(executable): \(reason)"
        case .lineNotFound(let text, let exitStatus, let output):
            let why = exitStatus.map { "the server exited with status \($0)" } ?? "timed out"
            return "no output line containing \"\(text)\" (\(why)); server output:\n\(output)"
        case .exitTimeout(let seconds, let output):
            return "the server did not exit within \(seconds)s; server output:\n\(output)"
        case .unparsableListeningLine(let line):
            return "cannot find a port in \"\(line)\""
        }
    }
}
