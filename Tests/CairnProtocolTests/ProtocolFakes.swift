// What the protocol layer's tests need beyond the domain's fakes: an outbound that records what would have been
// sent (decoded with Foundation for easy assertions), a way to feed text frames to the router, and error codes.
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import CairnWire
import Foundation
import Testing

/// Records replies and closes per connection, decoded with Foundation for easy assertions.
final class RecordingOutbound: Outbound {
    var sent: [ConnectionID: [[String: Any]]] = [:]
    var latest: [ConnectionID: [Int64: [UInt8]]] = [:]
    var closes: [ConnectionID: (code: CloseCode, reason: String)] = [:]

    func sendLatest(_ connection: ConnectionID, key: Int64, _ json: [UInt8]) {
        latest[connection, default: [:]][key] = json
    }
    func dropLatest(_ connection: ConnectionID, key: Int64) { latest[connection]?[key] = nil }

    /// Takes the latest-wins slots of a connection, decoded, keyed by their key.
    func takeLatest(_ connection: ConnectionID) -> [Int64: [String: Any]] {
        defer { latest[connection] = nil }
        return (latest[connection] ?? [:]).mapValues {
            try! JSONSerialization.jsonObject(with: Data($0)) as! [String: Any]
        }
    }

    func send(_ connection: ConnectionID, _ json: UnsafeRawBufferPointer) {
        let object = try! JSONSerialization.jsonObject(with: Data(json)) as! [String: Any]
        sent[connection, default: []].append(object)
    }

    func close(_ connection: ConnectionID, code: UInt16, reason: String) {
        closes[connection] = (CloseCode(rawValue: code)!, reason)
    }

    func take(_ connection: ConnectionID) -> [[String: Any]] {
        defer { sent[connection] = [] }
        return sent[connection] ?? []
    }
}

extension Router {
    func receive(_ connection: ConnectionID, _ text: String) {
        Array(text.utf8).withUnsafeBytes { received(connection, frame: $0) }
    }
}

func errorCode(_ object: [String: Any]) -> String? {
    (object["error"] as? [String: Any])?["code"] as? String
}
