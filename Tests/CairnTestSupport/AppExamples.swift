// Request bodies exactly as the apps that report to Cairn document them, shared by the parsing tests and the
// integration tests so that both read the same bytes.

/// The apps' own documented examples.
public enum AppExamples {
    /// Overland's README example (aaronpk/Overland-iOS, "API"), as the app posts it.
    public static let overlandReadme = """
        {
          "locations": [
            {
              "type": "Feature",
              "geometry": {
                "type": "Point",
                "coordinates": [
                  -122.030581,
                  37.331800
                ]
              },
              "properties": {
                "timestamp": "2015-10-01T08:00:00-0700",
                "altitude": 0,
                "speed": 4,
                "horizontal_accuracy": 30,
                "vertical_accuracy": -1,
                "motion": ["driving","stationary"],
                "pauses": false,
                "activity": "other_navigation",
                "desired_accuracy": 100,
                "deferred": 1000,
                "significant_change": "disabled",
                "locations_in_payload": 1,
                "battery_state": "charging",
                "battery_level": 0.89,
                "device_id": "",
                "wifi": ""
              }
            }
          ]
        }
        """
}
