// The daily figures on the wire: as `admin.stats` rows (`{date, day, new_users, ..., median_resolve_s?}`) and as the
// CSV of `GET /v1/admin/stats.csv` (a header row naming the columns, then a row per day, oldest first; a median
// with nothing to take it of is an empty cell). Both list the columns in `DailyStatColumn`'s order.
import CairnAdmin
import CairnWire

extension DailyStatsRow {
    /// Writes `{date, day, <column>: n, ...}`; a column without a value is left out.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("date", date)
        w.field("day", day)
        for column in DailyStatColumn.allCases {
            guard let value = values[column] else { continue }
            w.key(column.rawValue)
            w.int(value)
        }
        w.endObject()
    }
}

enum DailyStatsCSV {
    /// The CSV text (RFC 4180, CRLF line ends): `date,new_users,...` then one line per row.
    static func text(_ rows: [DailyStatsRow]) -> String {
        var text = (["date"] + DailyStatColumn.allCases.map(\.rawValue)).joined(separator: ",") + "\r\n"
        for row in rows {
            let cells = DailyStatColumn.allCases.map { column in row.values[column].map { "\($0)" } ?? "" }
            text += ([row.date] + cells).joined(separator: ",") + "\r\n"
        }
        return text
    }
}
