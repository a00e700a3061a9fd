-- SPDX-License-Identifier: Apache-2.0
-- wrk script of bench/run and bench/load: rotates over the requests given
-- after "--", and prints one machine-readable summary line.
--
--   wrk -t T -c C -d D -s bench/paths.lua URL -- [max=N] [threads=T] [seq=1] REQUEST...
--
-- A REQUEST is a path ("/items/?start=...", sent as GET), or "POST PATH BODY"
-- (BODY sent as application/json). Every request carries wrk's -H headers
-- (Authorization, for the backend floors) and Accept: application/json.
--
-- Each wrk thread takes the requests in turn (request 1 gets REQUEST 1,
-- request 2 REQUEST 2, ...). A page is one request, or with seq=1 the whole
-- sequence REQUEST 1 .. REQUEST n sent one after the other on one
-- connection, as a client pages with several sequential queries. With max=N
-- (and threads=T, wrk's -t) each thread stops after its share of N
-- responses, ceil(N / T), and appends a line to the file named by
-- $BENCH_DONE_FILE; wrk still waits out -d unless sent SIGINT.
--
-- Latency: when every thread has exactly one connection (-t equal to -c), a
-- thread's request() and response() calls alternate for that one
-- connection, so the time between them is that request's latency, and the
-- time from REQUEST 1's request() to REQUEST n's response() is a page's
-- (with seq=1). Both are measured with clock_gettime(CLOCK_MONOTONIC)
-- through LuaJIT's FFI. With more connections than threads responses cannot
-- be matched to requests, and no latency of our own is given.
--
-- done() prints, on one line starting with "BENCH":
--   requests, duration_s, rps; p50_us, p99_us, mean_us: wrk's own latency
--   figures over all requests, which wrk "corrects" for coordinated omission
--   (it adds made-up samples for every response slower than the mean
--   interval), so its mean is not the mean time of a request;
--   errors (connect, read, write, timeout); status4xx5xx (wrk's count of
--   status > 399); non2xx (this script's count of any status outside
--   200-299); sent (requests sent, answered or not: what reached the
--   server); pages (pages answered in full), pages_sent (pages begun), pps
--   (pages / duration_s); per request i: path<i>_n, path<i>_non2xx; and
--   with one connection per thread, latencies as measured, uncorrected:
--   raw_mean_us, raw_p50_us, raw_p99_us over all requests, page_mean_us,
--   page_p50_us, page_p99_us over pages, and path<i>_mean_us,
--   path<i>_p50_us, path<i>_p99_us. With $BENCH_LAT_FILE set, every page's
--   latency (us) is also written there, one a line, to pool several runs.
local ffi = require("ffi")
ffi.cdef [[
  typedef long time_t;
  struct bench_timespec { time_t tv_sec; long tv_nsec; };
  int clock_gettime(int clk_id, struct bench_timespec *tp);
]]
local CLOCK_MONOTONIC = 1
local ts = ffi.new("struct bench_timespec")

local function now_us()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
  return tonumber(ts.tv_sec) * 1000000 + tonumber(ts.tv_nsec) / 1000
end

-- ---- main state: setup() and done() ----------------------------------------
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

-- ---- thread state ------------------------------------------------------------
local requests = {}     -- preformatted requests, one per REQUEST
local max_total = 0     -- 0: no limit
local done_file = os.getenv("BENCH_DONE_FILE")
local my_max = 0
local next_i = 0
local cur_i = 1
local started = nil
local page_started = nil
local responses = 0
-- Read by done() with thread:get(), which copies flat tables only (a nested
-- one crashes wrk 4.1): per request i, globals lat_<i> (latencies in us),
-- count_<i> and non2xx_<i>; page_lat, sent, pages_sent, npaths, seq.
npaths = 0
seq = 0
sent = 0
pages_sent = 0
page_lat = {}
local lat, count, non2xx = {}, {}, {}

-- wrk.format() sends only the headers it is given (and Host): wrk's -H
-- headers are added here, so that the floors carry the same Authorization
-- header as the module's backend queries.
local function headers_for(extra)
  local h = {}
  for k, v in pairs(wrk.headers) do h[k] = v end
  h["Accept"] = "application/json"
  for k, v in pairs(extra) do h[k] = v end
  return h
end

function init(args)
  -- wrk's args table starts at index 0 with the URL itself: skip it
  local nthr = 1
  local specs = {}
  for i = 0, #args do
    local a = args[i]
    if a == nil or a:match("^https?://") then
      -- the URL
    elseif a:match("^max=%d+$") then
      max_total = tonumber(a:sub(5))
    elseif a:match("^threads=%d+$") then
      nthr = tonumber(a:sub(9))
    elseif a == "seq=1" then
      seq = 1
    else
      table.insert(specs, a)
    end
  end
  if #specs == 0 then
    error("paths.lua: give at least one request after --")
  end
  npaths = #specs
  for i, s in ipairs(specs) do
    local method, path, body = s:match("^(%u+) (%S+) (.*)$")
    if method then
      requests[i] = wrk.format(method, path, headers_for({ ["Content-Type"] = "application/json" }), body)
    else
      requests[i] = wrk.format("GET", s, headers_for({}))
    end
    lat[i] = {}
    _G["lat_" .. i] = lat[i]
    non2xx[i] = 0
    count[i] = 0
  end
  if max_total > 0 then
    my_max = math.ceil(max_total / nthr)
  end
end

local one_conn = tonumber(os.getenv("BENCH_ONE_CONN_PER_THREAD") or "0") == 1

function request()
  if one_conn and started then
    -- The previous request got no response: wrk asks again when its write
    -- could not start (a connection not yet up) or after a reconnect. Send
    -- the same request, so that a sequence keeps its order; it counts once.
    started = now_us()
    if cur_i == 1 then page_started = started end
    return requests[cur_i]
  end
  next_i = next_i % #requests + 1
  cur_i = next_i
  started = now_us()
  sent = sent + 1
  if cur_i == 1 then
    page_started = started
    pages_sent = pages_sent + 1
  end
  return requests[cur_i]
end

function response(status, headers, body)
  local i = cur_i
  if started then
    local now = now_us()
    local l = lat[i]
    l[#l + 1] = now - started
    started = nil
    -- a page is one request, or with seq=1 ends with the last one
    if seq == 0 then
      page_lat[#page_lat + 1] = l[#l]
    elseif i == #requests and page_started then
      page_lat[#page_lat + 1] = now - page_started
      page_started = nil
    end
  end
  count[i] = count[i] + 1
  _G["count_" .. i] = count[i]
  if status < 200 or status > 299 then
    non2xx[i] = non2xx[i] + 1
    _G["non2xx_" .. i] = non2xx[i]
  end
  responses = responses + 1
  if my_max > 0 and responses == my_max then
    -- wrk itself runs out its -d even when every thread has stopped: tell
    -- the caller (BENCH_DONE_FILE gets one line per finished thread), which
    -- then ends wrk with SIGINT
    local f = done_file and io.open(done_file, "a")
    if f then f:write("done\n"); f:close() end
    wrk.thread:stop()
  end
end

local function percentile(sorted, p)
  if #sorted == 0 then return 0 end
  local k = math.ceil(p / 100 * #sorted)
  if k < 1 then k = 1 end
  return sorted[k]
end

function done(summary, latency, reqs)
  local e = summary.errors
  local secs = summary.duration / 1e6
  local out = {
    string.format("requests=%d", summary.requests),
    string.format("duration_s=%.3f", secs),
    string.format("rps=%.1f", summary.requests / secs),
    string.format("p50_us=%d", latency:percentile(50)),
    string.format("p99_us=%d", latency:percentile(99)),
    string.format("mean_us=%.0f", latency.mean),
    string.format("errors_connect=%d", e.connect),
    string.format("errors_read=%d", e.read),
    string.format("errors_write=%d", e.write),
    string.format("errors_timeout=%d", e.timeout),
    string.format("status4xx5xx=%d", e.status),
  }
  local per_path = {}
  local total_non2xx, total_sent, total_pages_sent = 0, 0, 0
  local np, is_seq = 0, 0
  local pages = {}
  for _, t in ipairs(threads) do
    local tnp = tonumber(t:get("npaths")) or 0
    if tnp > np then np = tnp end
    is_seq = tonumber(t:get("seq")) or 0
    total_sent = total_sent + (tonumber(t:get("sent")) or 0)
    total_pages_sent = total_pages_sent + (tonumber(t:get("pages_sent")) or 0)
    for _, v in ipairs(t:get("page_lat") or {}) do pages[#pages + 1] = v end
    for i = 1, tnp do
      local pp = per_path[i] or { n = 0, non2xx = 0, lat = {} }
      per_path[i] = pp
      local bad = tonumber(t:get("non2xx_" .. i)) or 0
      pp.n = pp.n + (tonumber(t:get("count_" .. i)) or 0)
      pp.non2xx = pp.non2xx + bad
      total_non2xx = total_non2xx + bad
      for _, v in ipairs(t:get("lat_" .. i) or {}) do pp.lat[#pp.lat + 1] = v end
    end
  end
  -- pages answered in full: every response is a page, or with seq=1 the
  -- responses to the last request of the sequence
  local npages = summary.requests
  if is_seq == 1 and per_path[np] then npages = per_path[np].n end
  table.insert(out, string.format("non2xx=%d", total_non2xx))
  table.insert(out, string.format("sent=%d", total_sent))
  table.insert(out, string.format("pages=%d", npages))
  table.insert(out, string.format("pages_sent=%d", is_seq == 1 and total_pages_sent or total_sent))
  table.insert(out, string.format("pps=%.1f", npages / secs))
  -- latency of our own is exact only with one connection per thread
  local all = {}
  local function stats(prefix, l)
    table.sort(l)
    local sum = 0
    for _, v in ipairs(l) do sum = sum + v end
    table.insert(out, string.format("%s_mean_us=%.0f", prefix, #l > 0 and sum / #l or 0))
    table.insert(out, string.format("%s_p50_us=%d", prefix, percentile(l, 50)))
    table.insert(out, string.format("%s_p99_us=%d", prefix, percentile(l, 99)))
  end
  for i = 1, np do
    local pp = per_path[i] or { n = 0, non2xx = 0, lat = {} }
    table.insert(out, string.format("path%d_n=%d", i, pp.n))
    table.insert(out, string.format("path%d_non2xx=%d", i, pp.non2xx))
    if one_conn then
      for _, v in ipairs(pp.lat) do all[#all + 1] = v end
      stats("path" .. i, pp.lat)
    end
  end
  if one_conn then
    stats("raw", all)
    stats("page", pages)
    local file = os.getenv("BENCH_LAT_FILE")
    local f = file and file ~= "" and io.open(file, "w")
    if f then
      for _, v in ipairs(pages) do f:write(string.format("%.0f\n", v)) end
      f:close()
    end
  end
  io.write("BENCH " .. table.concat(out, " ") .. "\n")
end
