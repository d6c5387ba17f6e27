// The frames one loop turn writes, handed to the kernel in one io_uring submission rather than one send() per
// connection (decision 0037). At 10,000 connections the hub's CPU per delivery is mostly the kernel's, and a
// system call per frame is a part of it that batching removes. Each send is non-blocking: a socket that takes
// only part of a frame says how much, and the endpoint passes the rest to libwebsockets, which buffers it as it
// buffers any partial write, so the stream stays whole. Plain sockets only (TLS records are written by lws).
import CUring
import Glibc

/// A reusable batch of non-blocking sends. Loop thread only.
final class SendBatch {
    /// What became of one entry after `submit`.
    enum Outcome: Equatable {
        /// The socket took this many of the entry's bytes (all, some, or none: a full socket).
        case sent(Int)
        /// The send failed with this errno (the peer is gone); the connection must close.
        case failed(Int32)
        /// The kernel never took the entry: its bytes are still to be written some other way.
        case notSubmitted
        /// Taken, but its completion was lost: whether the bytes went out is unknown; the connection must close.
        case unknown
    }

    /// Sends per submission: the floor measurement's knee (docs/BENCHMARKS.md, io_uring at the floor).
    static let defaultEntries: UInt32 = 256
    /// Bytes of frames per submission; a frame larger than this is written without the batch.
    static let defaultBytes = 64 * 1024

    private let batch: OpaquePointer

    /// A batch, or the errno for which the kernel refused io_uring (ENOSYS, EPERM under a seccomp filter).
    static func make(entries: UInt32 = defaultEntries, bytes: Int = defaultBytes) -> Result<SendBatch, Errno> {
        var error: Int32 = 0
        guard let batch = cairn_send_batch_create(entries, bytes, &error) else { return .failure(Errno(error)) }
        return .success(SendBatch(batch))
    }

    private init(_ batch: OpaquePointer) {
        self.batch = batch
    }

    deinit {
        cairn_send_batch_destroy(batch)
    }

    /// The most bytes one batch holds: a larger frame never goes through a batch.
    var capacityBytes: Int { cairn_send_batch_capacity_bytes(batch) }

    /// Entries added since the last reset.
    var count: Int { Int(cairn_send_batch_count(batch)) }

    /// Copies `bytes` in, to send on `fd`. False when the batch has no room (submit it, reset it, add again).
    func add(fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        cairn_send_batch_add(batch, fd, bytes.baseAddress, bytes.count) >= 0
    }

    /// Adds an entry of `length` bytes that `fill` writes in place (it gets exactly that room), to send on `fd`.
    /// False, without calling `fill`, when the batch has no room; once `fill` ran, the entry is in the batch.
    func add(fd: Int32, length: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> Bool {
        guard let room = cairn_send_batch_reserve(batch, length) else { return false }
        fill(UnsafeMutableRawBufferPointer(start: room, count: length))
        // A reserve that succeeded leaves room for the commit (cairn_send_batch.h), so `fill`'s work is never lost.
        precondition(cairn_send_batch_commit(batch, fd, length) >= 0, "a commit after a reserve failed")
        return true
    }

    /// Sends every entry. Nil, or the errno of a failed submission, after which the batch refuses all further use
    /// (each entry's `outcome` still says what became of it).
    func submit() -> Errno? {
        let status = cairn_send_batch_submit(batch)
        return status == 0 ? nil : Errno(-status)
    }

    /// What became of entry `index` in the last submission.
    func outcome(_ index: Int) -> Outcome {
        let result = cairn_send_batch_result(batch, UInt32(index))
        switch result {
        case Int32(CAIRN_SEND_NOT_SUBMITTED): return .notSubmitted
        case Int32(CAIRN_SEND_UNKNOWN): return .unknown
        case -EAGAIN, -EINTR: return .sent(0)
        case ..<0: return .failed(-result)
        default: return .sent(Int(result))
        }
    }

    /// The copy of entry `index`'s bytes from `offset` on (valid until `reset`).
    func bytes(_ index: Int, from offset: Int) -> UnsafeRawBufferPointer {
        let start = cairn_send_batch_bytes(batch, UInt32(index))!
        let length = cairn_send_batch_length(batch, UInt32(index))
        return UnsafeRawBufferPointer(start: start + offset, count: length - offset)
    }

    /// Forgets every entry, keeping the memory.
    func reset() {
        cairn_send_batch_reset(batch)
    }
}

/// An errno value, named for messages.
struct Errno: Error, Equatable, CustomStringConvertible {
    let code: Int32
    init(_ code: Int32) { self.code = code }
    var description: String { String(cString: strerror(code)) + " (errno \(code))" }
}
