// `cluster.redis_url`: what is accepted, and that every refusal names what is wrong.
import Testing

@testable import CairnCluster

@Suite(.timeLimit(.minutes(5))) struct RedisEndpointTests {
    @Test func acceptsHostAndPortForms() throws {
        #expect(try RedisEndpoint(url: "redis://127.0.0.1:6380") == RedisEndpoint(host: "127.0.0.1", port: 6380))
        #expect(try RedisEndpoint(url: "redis://10.0.0.7") == RedisEndpoint(host: "10.0.0.7", port: 6379))
        #expect(try RedisEndpoint(url: "redis://localhost:7000/") == RedisEndpoint(host: "127.0.0.1", port: 7000))
        #expect(try RedisEndpoint(url: "redis://[::1]:6379/0") == RedisEndpoint(host: "::1", port: 6379))
        #expect(try RedisEndpoint(url: "redis://[::1]:6379").description == "redis://[::1]:6379")
    }

    @Test(arguments: [
        ("http://127.0.0.1:6379", "redis://"),
        ("redis://", "host is missing"),
        ("redis://redis.internal:6379", "IP address"),
        ("redis://127.0.0.1:0", "port"),
        ("redis://127.0.0.1:99999", "port"),
        ("redis://127.0.0.1:abc", "port"),
        ("redis://127.0.0.1:6379/3", "database 0"),
        ("redis://:secret@127.0.0.1", "credentials"),
        ("redis://300.1.1.1", "IP address"),
        ("redis://[::1", "unclosed"),
    ])
    func refusesWithAReason(url: String, reason: String) {
        #expect {
            _ = try RedisEndpoint(url: url)
        } throws: { error in
            (error as? RedisURLError)?.message.contains(reason) == true
        }
    }
}
