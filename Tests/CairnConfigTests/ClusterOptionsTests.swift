// `[cluster]`: absent means a single node; a usable URL, node and prefix reach `AppConfiguration`; a bad URL, a
// bad name or the poll loop is a configuration problem at start, in words that name the key. A node without a
// shared store needs `cluster.key` (32 characters or more), never repeated in the refusal.
import CairnApp
import CairnConfig
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5)))
struct ClusterOptionsTests {
    @Test func absentMeansASingleNode() throws {
        let resolved = try ConfigurationResolver.resolve()
        #expect(resolved.app.cluster == ClusterConfiguration())
        #expect(!resolved.app.cluster.isEnabled)
        #expect(resolved.app.cluster.prefix == "cairn")
        #expect(resolved.app.cluster.presenceRefreshSeconds == 5)
    }

    @Test func settingsReachTheConfiguration() throws {
        let resolved = try ConfigurationResolver.resolve(
            environment: ["CAIRN_REDIS_URL": "redis://10.0.0.5:6380", "CAIRN_CLUSTER_KEY": Self.key],
            commandLine: CommandLineSettings([
                "--cluster-node", "hub-a", "--cluster-prefix", "eu.prod", "--cluster-presence-refresh", "2",
            ]))
        let cluster = resolved.app.cluster
        #expect(cluster.isEnabled)
        #expect(cluster.redisURL == "redis://10.0.0.5:6380")
        #expect(cluster.node == "hub-a" && cluster.nodeName == "hub-a")
        #expect(cluster.prefix == "eu.prod")
        #expect(cluster.presenceRefreshSeconds == 2)
        #expect(cluster.key == Self.key)
    }

    static let key = String(repeating: "5e", count: 32)

    @Test func aSharedStoreHoldsTheKeyWhenNoneIsGiven() throws {
        let resolved = try ConfigurationResolver.resolve(environment: [
            "CAIRN_REDIS_URL": "redis://10.0.0.5:6380", "CAIRN_STORAGE_URL": "postgresql://cairn@10.0.0.6/cairn",
        ])
        #expect(resolved.app.cluster.isEnabled && resolved.app.cluster.key == nil)
    }

    @Test func theDefaultNodeNameIsHostAndPid() {
        let name = ClusterConfiguration().nodeName
        #expect(name.hasSuffix("-\(getpid())"))
        #expect(ClusterConfiguration.problem(name: name, key: "cluster.node") == nil)
    }

    @Test(arguments: [
        (["CAIRN_REDIS_URL": "redis://redis.internal:6379"], "cluster.redis_url 'redis://redis.internal:6379'"),
        (["CAIRN_REDIS_URL": "tcp://127.0.0.1:6379"], "must start with redis://"),
        (["CAIRN_REDIS_URL": "redis://127.0.0.1:6379", "CAIRN_CLUSTER_NODE": "a/b"], "cluster.node 'a/b'"),
        (["CAIRN_REDIS_URL": "redis://127.0.0.1:6379", "CAIRN_CLUSTER_PREFIX": "a b"], "cluster.prefix 'a b'"),
        (
            ["CAIRN_REDIS_URL": "redis://127.0.0.1:6379", "CAIRN_EVENT_LOOP": "poll"],
            "cluster.redis_url needs server.event_loop = libev"
        ),
        (["CAIRN_REDIS_URL": "redis://127.0.0.1:6379"], "cluster.redis_url without storage.url needs cluster.key"),
        (
            ["CAIRN_REDIS_URL": "redis://127.0.0.1:6379", "CAIRN_CLUSTER_KEY": "short-secret"],
            "cluster.key must have at least 32 characters"
        ),
    ])
    func problemsNameTheKey(environment: [String: String], message: String) {
        #expect {
            _ = try ConfigurationResolver.resolve(environment: environment)
        } throws: { error in
            String(describing: error).contains(message) && !String(describing: error).contains("short-secret")
        }
    }
}
