// A strict reader of the Prometheus text exposition format (version 0.0.4), for tests of `/metrics`: every line
// must be a well-formed HELP or TYPE comment or a sample with a valid metric name, well-formed labels and a float
// value; samples must belong to a family whose TYPE came first; histogram buckets must be cumulative (monotone in
// `le`), end with `+Inf`, and the `+Inf` bucket must equal `_count`. Anything else is an error naming the line.
import Foundation

/// One parsed exposition.
public struct PrometheusText {
    /// One sample line.
    public struct Sample: Equatable {
        /// Metric name as written (with `_bucket`, `_sum`, `_count` suffixes for histograms).
        public var name: String
        /// Labels in the order written.
        public var labels: [String: String]
        /// The value.
        public var value: Double
    }

    /// Metric families by name: their TYPE.
    public private(set) var types: [String: String] = [:]
    /// HELP texts by family name.
    public private(set) var help: [String: String] = [:]
    /// Every sample in order.
    public private(set) var samples: [Sample] = []

    /// A problem with the text.
    public struct Invalid: Error, CustomStringConvertible {
        /// What is wrong and where.
        public var description: String
    }

    /// Parses and validates `text`.
    public init(_ text: String) throws {
        guard text.isEmpty || text.hasSuffix("\n") else {
            throw Invalid(description: "the text must end with a newline")
        }
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw)
            func fail(_ why: String) -> Invalid { Invalid(description: "line \(number + 1) '\(line)': \(why)") }
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
                guard parts.count >= 3, parts[0] == "#" else { continue }  // a plain comment
                let name = parts[2]
                guard Self.isMetricName(name) else { throw fail("bad metric name") }
                switch parts[1] {
                case "HELP":
                    guard help[name] == nil else { throw fail("second HELP for \(name)") }
                    help[name] = parts.count == 4 ? parts[3] : ""
                case "TYPE":
                    guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3])
                    else {
                        throw fail("bad TYPE")
                    }
                    guard types[name] == nil else { throw fail("second TYPE for \(name)") }
                    guard !samples.contains(where: { Self.family(of: $0.name, in: [name: parts[3]]) == name }) else {
                        throw fail("TYPE after samples of \(name)")
                    }
                    types[name] = parts[3]
                default: continue
                }
                continue
            }
            let sample = try Self.sample(line, fail)
            guard let family = Self.family(of: sample.name, in: types) else { throw fail("sample without a TYPE") }
            if types[family] == "counter" && sample.value < 0 { throw fail("negative counter") }
            samples.append(sample)
        }
        try checkHistograms()
    }

    /// The value of the sample `name` with exactly `labels`, if present.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    static func isMetricName(_ s: String) -> Bool {
        s.range(of: "^[a-zA-Z_:][a-zA-Z0-9_:]*$", options: .regularExpression) != nil
    }

    static func isLabelName(_ s: String) -> Bool {
        s.range(of: "^[a-zA-Z_][a-zA-Z0-9_]*$", options: .regularExpression) != nil
    }

    /// The family a sample name belongs to (a histogram's `_bucket`/`_sum`/`_count` belong to the histogram).
    static func family(of name: String, in types: [String: String]) -> String? {
        if types[name] != nil { return name }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if let type = types[base], type == "histogram" || (type == "summary" && suffix != "_bucket") { return base }
        }
        return nil
    }

    static func sample(_ line: String, _ fail: (String) -> Invalid) throws -> Sample {
        var rest = Substring(line)
        let nameEnd = rest.firstIndex { $0 == "{" || $0 == " " } ?? rest.endIndex
        let name = String(rest[..<nameEnd])
        guard isMetricName(name) else { throw fail("bad metric name") }
        rest = rest[nameEnd...]
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                guard let eq = rest.firstIndex(of: "=") else { throw fail("label without '='") }
                let label = String(rest[..<eq])
                guard isLabelName(label) else { throw fail("bad label name '\(label)'") }
                rest = rest[rest.index(after: eq)...]
                guard rest.first == "\"" else { throw fail("label value must be quoted") }
                rest = rest.dropFirst()
                var value = ""
                while true {
                    guard let c = rest.first else { throw fail("unterminated label value") }
                    rest = rest.dropFirst()
                    if c == "\"" { break }
                    if c == "\\" {
                        guard let e = rest.first else { throw fail("dangling escape") }
                        rest = rest.dropFirst()
                        switch e {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: throw fail("bad escape")
                        }
                    } else {
                        value.append(c)
                    }
                }
                guard labels[label] == nil else { throw fail("repeated label \(label)") }
                labels[label] = value
                if rest.first == "," {
                    rest = rest.dropFirst()
                } else if rest.first != "}" {
                    throw fail("expected ',' or '}'")
                }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { throw fail("expected a space before the value") }
        let fields = rest.dropFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 1 || fields.count == 2 else { throw fail("expected a value and an optional timestamp") }
        guard let value = parseFloat(String(fields[0])) else { throw fail("bad value") }
        if fields.count == 2, Int64(fields[1]) == nil { throw fail("bad timestamp") }
        return Sample(name: name, labels: labels, value: value)
    }

    static func parseFloat(_ s: String) -> Double? {
        switch s {
        case "+Inf", "Inf": return .infinity
        case "-Inf": return -.infinity
        case "NaN": return .nan
        default:
            guard
                s.range(of: "^[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?$", options: .regularExpression) != nil
            else { return nil }
            return Double(s)
        }
    }

    private func checkHistograms() throws {
        for (name, type) in types where type == "histogram" {
            // Group the buckets by their labels other than `le`.
            var series: [[String: String]: [(le: Double, count: Double)]] = [:]
            for s in samples where s.name == name + "_bucket" {
                guard let leText = s.labels["le"], let le = Self.parseFloat(leText) else {
                    throw Invalid(description: "\(name)_bucket without a valid le")
                }
                var key = s.labels
                key["le"] = nil
                series[key, default: []].append((le, s.value))
            }
            guard !series.isEmpty else { throw Invalid(description: "histogram \(name) has no buckets") }
            for (labels, buckets) in series {
                let sorted = buckets.sorted { $0.le < $1.le }
                for (a, b) in zip(sorted, sorted.dropFirst()) where b.count < a.count {
                    throw Invalid(description: "\(name) buckets are not cumulative at le=\(b.le)")
                }
                guard let last = sorted.last, last.le == .infinity else {
                    throw Invalid(description: "\(name) has no +Inf bucket")
                }
                guard let count = value(name + "_count", labels), value(name + "_sum", labels) != nil else {
                    throw Invalid(description: "\(name) lacks _count or _sum")
                }
                guard count == last.count else {
                    throw Invalid(description: "\(name): +Inf bucket \(last.count) differs from _count \(count)")
                }
            }
        }
    }
}
