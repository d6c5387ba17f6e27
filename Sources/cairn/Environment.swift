// A single setting for commands other than `serve` (e.g. `seed --data`): the flag wins over its environment
// variable, which wins over the default. `serve` resolves its many settings through CairnConfig instead.
import Foundation

struct Environment {
    let values = ProcessInfo.processInfo.environment

    func resolve(_ flag: String?, _ name: String, default value: String) -> String {
        if let flag { return flag }
        if let env = values[name], !env.isEmpty { return env }
        return value
    }
}
