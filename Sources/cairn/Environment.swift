// Option resolution for the CLI: a flag wins over its environment variable, which wins over the default. A bad
// environment value is an error naming the variable, never silently ignored.
import ArgumentParser
import Foundation

struct Environment {
    let values = ProcessInfo.processInfo.environment

    func resolve(_ flag: String?, _ name: String, default value: String) throws -> String {
        if let flag { return flag }
        if let env = values[name], !env.isEmpty { return env }
        return value
    }

    func resolve<T: LosslessStringConvertible & Comparable>(_ flag: T?, _ name: String, default value: T,
                                                            valid range: ClosedRange<T>? = nil) throws -> T {
        let resolved: T
        let source: String
        if let flag {
            resolved = flag
            source = "option"
        } else if let env = values[name], !env.isEmpty {
            guard let parsed = T(env.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("environment variable \(name)='\(env)' is not a valid \(T.self)")
            }
            resolved = parsed
            source = "environment variable \(name)"
        } else {
            return value
        }
        if let range, !range.contains(resolved) {
            throw ValidationError("\(source) value \(resolved) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return resolved
    }
}
