// A single setting for commands other than `serve` (e.g. `stats --url`): the flag wins over its environment
// variable, which wins over the default. `serve`, and the maintenance commands for their storage (StorageOptions),
// resolve through CairnConfig instead.
import Foundation

struct Environment {
    let values = ProcessInfo.processInfo.environment

    func resolve(_ flag: String?, _ name: String, default value: String) -> String {
        if let flag { return flag }
        if let env = values[name], !env.isEmpty { return env }
        return value
    }
}
