// A position on the wire, as the viewer may see it: the precise fix with whatever optional fields it carries, or
// the approximate version (the cell's centre, `approx: true`, the time). The domain has already reduced an
// approximate fix; this only writes what it was given.
import CairnCore
import CairnWire

extension VisiblePosition {
    /// Writes the position's fields into an open object.
    func write(to w: inout JSONWriter) {
        w.key("user")
        w.int(owner)
        w.key("lat")
        w.double(fix.lat)
        w.key("lon")
        w.double(fix.lon)
        if stale {
            w.key("stale")
            w.bool(true)
        }
        if approximate {
            w.key("approx")
            w.bool(true)
            w.key("ts")
            w.int(fix.ts)
            return
        }
        if let v = fix.acc {
            w.key("acc")
            w.double(v)
        }
        if let v = fix.alt {
            w.key("alt")
            w.double(v)
        }
        if let v = fix.spd {
            w.key("spd")
            w.double(v)
        }
        if let v = fix.hdg {
            w.key("hdg")
            w.double(v)
        }
        if let v = fix.bat {
            w.key("bat")
            w.double(v)
        }
        w.key("ts")
        w.int(fix.ts)
        if fix.flagged {
            w.key("flagged")
            w.bool(true)
        }
    }
}
