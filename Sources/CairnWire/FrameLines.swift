// A WebSocket text frame may carry several JSON texts separated by '\n' (spec "Transport"), in both directions.
// Splitting is done over the frame's bytes with memchr and hands out sub-buffers, so a batched frame costs no
// copies and no allocation before each line reaches the parser.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Iterates the newline-separated JSON texts of one frame; blank or whitespace-only lines are skipped.
public enum FrameLines {
    /// Calls `body` with each non-blank line of `frame`, in order, without the terminating `\n`.
    /// A line is blank when it holds only spaces, tabs, `\r` or nothing at all.
    public static func forEach(
        in frame: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer) throws -> Void
    ) rethrows {
        guard let base = frame.baseAddress else { return }
        let count = frame.count
        var start = 0
        while start < count {
            let end: Int
            if let found = memchr(base + start, 0x0A, count - start) {
                end = UnsafeRawPointer(found) - base
            } else {
                end = count
            }
            let line = UnsafeRawBufferPointer(start: base + start, count: end - start)
            if !isBlank(line) {
                try body(line)
            }
            start = end + 1
        }
    }

    /// Whether `line` holds only JSON whitespace.
    static func isBlank(_ line: UnsafeRawBufferPointer) -> Bool {
        for byte in line where byte != 0x20 && byte != 0x09 && byte != 0x0D && byte != 0x0A {
            return false
        }
        return true
    }
}
