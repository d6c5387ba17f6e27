// What `admin.settings.get` and `.set` answer: `{settings: {key: value, ...}, definitions: [{key, type, min?, max?,
// default, help}]}` — the values in force as a plain object a client can send back (in part) to `.set`, and what
// each setting is, so an admin screen needs no list of its own.
import CairnAdmin
import CairnWire

extension AdminSettingValue {
    /// Writes the value as a JSON number or boolean.
    func write(to w: inout JSONWriter) {
        switch self {
        case .integer(let value): w.int(value)
        case .boolean(let value): w.bool(value)
        }
    }
}

extension AdminSettingsReading {
    /// Writes the `settings` and `definitions` fields.
    func writeFields(to w: inout JSONWriter) {
        w.key("settings")
        w.beginObject()
        for (setting, value) in entries {
            w.key(setting.key)
            value.write(to: &w)
        }
        w.endObject()
        w.key("definitions")
        w.beginArray()
        for (setting, _) in entries {
            w.beginObject()
            w.field("key", setting.key)
            switch setting.kind {
            case .integer(let range):
                w.field("type", "integer")
                w.field("min", range.lowerBound)
                w.field("max", range.upperBound)
            case .boolean:
                w.field("type", "boolean")
            }
            w.key("default")
            setting.defaultValue.write(to: &w)
            w.field("help", setting.help)
            w.endObject()
        }
        w.endArray()
    }
}
