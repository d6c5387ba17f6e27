// Routes libwebsockets' own log lines into swift-log, so one logging setup governs the whole process.
import CLws
import Logging

let lwsLogger = Logger(label: "cairn.lws")

enum LwsLogBridge {
    static func install(verbosity: Int) {
        cairn_lws_set_logging(cairn_lws_log_mask(Int32(verbosity))) { level, line in
            guard let line else { return }
            var text = String(cString: line)
            while text.last == "\n" || text.last == "\r" { text.removeLast() }
            switch Int(level) {
            case 1: lwsLogger.error("\(text)")
            case 2: lwsLogger.warning("\(text)")
            case 4: lwsLogger.notice("\(text)")
            default: lwsLogger.info("\(text)")
            }
        }
    }
}
