-- wrk script for the ingest benchmark: OsmAnd reports (`GET /v1/ingest/osmand?id=&key=&lat=&lon=&timestamp=`) on
-- wrk's keep-alive connections, cycling through the trackers that setup.py paired. Each wrk thread takes its own
-- share of the trackers (index % threads), so a tracker's timestamps, in epoch milliseconds from the wall clock, are
-- strictly increasing; each tracker walks at 1.4 m/s from its start (setup.py's file), so its reports pass
-- sensible filters (duplicate time, implied speed). A `response` hook counts the answers by status; `done` prints
-- them and fails the run's check line when any answer was not 200.
--
-- wrk -t2 -c16 -d20s --latency -s osmand.lua http://127.0.0.1:PORT -- DEVICES_FILE 2   (the last: wrk's -t)
local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } cairn_timespec;
int clock_gettime(int clk, cairn_timespec *ts);
]]
local ts = ffi.new("cairn_timespec")
local function now_ms()
    ffi.C.clock_gettime(0, ts) -- CLOCK_REALTIME
    return tonumber(ts.tv_sec) * 1000 + math.floor(tonumber(ts.tv_nsec) / 1000000)
end

local threads = {}
local next_index = 0

-- Main state: number the threads so each takes its own trackers.
function setup(thread)
    thread:set("thread_index", next_index)
    next_index = next_index + 1
    table.insert(threads, thread)
end

local trackers = {}
local cursor = 0
statuses = {}

function init(args)
    local path = args[1] or error("usage: wrk -tT ... -s osmand.lua URL -- DEVICES_FILE T")
    -- wrk numbers threads as it starts them and does not tell a script how many there will be: the run says
    local thread_count = tonumber(args[2] or "1")
    local index, n = 0, 0
    math.randomseed(1000 + thread_index)
    for line in io.lines(path) do
        local device, key, lat, lon = line:match("^(%S+) (%S+) %S+ (%S+) (%S+)")
        if device and index % thread_count == thread_index then
            n = n + 1
            trackers[n] = {
                prefix = "/v1/ingest/osmand?id=" .. device .. "&key=" .. key,
                lat = tonumber(lat),
                lon = tonumber(lon),
                heading = math.random() * 2 * math.pi,
                ts = 0,
            }
        end
        index = index + 1
    end
    assert(n > 0, "no trackers for thread " .. thread_index)
end

function request()
    cursor = cursor % #trackers + 1
    local t = trackers[cursor]
    local now = now_ms()
    if now <= t.ts then now = t.ts + 1 end
    if t.ts > 0 then
        -- walk at 1.4 m/s for the time since the last report, turning a little
        local metres = 1.4 * (now - t.ts) / 1000
        t.heading = t.heading + (math.random() - 0.5) * 0.3
        t.lat = t.lat + metres * math.cos(t.heading) / 111320
        t.lon = t.lon + metres * math.sin(t.heading) / (111320 * math.cos(math.rad(t.lat)))
    end
    t.ts = now
    return wrk.format("GET", string.format("%s&lat=%.7f&lon=%.7f&timestamp=%d&speed=2.7&accuracy=8",
        t.prefix, t.lat, t.lon, now))
end

function response(status, headers, body)
    statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
    local total, ok = 0, 0
    local by = {}
    for _, thread in ipairs(threads) do
        for status, n in pairs(thread:get("statuses")) do
            by[status] = (by[status] or 0) + n
            total = total + n
            if status == 200 then ok = ok + n end
        end
    end
    local parts = {}
    for status, n in pairs(by) do table.insert(parts, status .. "=" .. n) end
    table.sort(parts)
    io.write(string.format("statuses: %s\n", table.concat(parts, " ")))
    io.write(string.format("non-200: %d of %d answers; socket errors: connect %d, read %d, write %d, timeout %d\n",
        total - ok, total, summary.errors.connect, summary.errors.read, summary.errors.write,
        summary.errors.timeout))
    io.write(string.format("requests/s: %.0f\n", summary.requests / (summary.duration / 1e6)))
    for _, p in ipairs({ 50, 90, 99, 99.9 }) do
        io.write(string.format("latency p%s: %.2f ms\n", p, latency:percentile(p) / 1000))
    end
    io.write(string.format("latency max: %.2f ms\n", latency.max / 1000))
end
