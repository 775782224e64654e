-- wrk script of the HTTP benchmark: POST /login with a mix of logins, timed per kind.
--
--   wrk -s bench/service/mix.lua URL -- USERS PLANTED SEED [timing]
--
-- Each request is a valid login (70%), a wrong password (20%), an unknown user (9%) or a user
-- whose stored hash was planted with costly parameters (1%); with "timing", half are wrong
-- passwords and half unknown users, to compare their times.  The request carries its kind and
-- the moment it was sent in an X-Bench header, which the server copies into its answer; each
-- answer is then printed as one line "R <kind> <status> <microseconds> <retry-after>", and the
-- socket errors as "E <connect> <read> <write> <timeout>", after the run.

local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clock, bench_timespec *now);
]]
local now_buffer = ffi.new("bench_timespec")

local function now_us()
  ffi.C.clock_gettime(1, now_buffer) -- CLOCK_MONOTONIC
  return tonumber(now_buffer.tv_sec) * 1000000 + math.floor(tonumber(now_buffer.tv_nsec) / 1000)
end

local threads = {}
local next_seed = 0

function setup(thread)
  next_seed = next_seed + 1
  thread:set("thread_seed", next_seed)
  table.insert(threads, thread)
end

local users, planted, timing
-- A global, so that done() can collect it from every thread.
answers = {}

function init(args)
  users = tonumber(args[1])
  planted = tonumber(args[2])
  timing = args[4] == "timing"
  math.randomseed(tonumber(args[3]) * 1000 + thread_seed)
end

local function body(name, password)
  return '{"username":"' .. name .. '","password":"' .. password .. '"}'
end

function request()
  local draw = math.random(100)
  if timing then
    -- Wrong passwords and unknown users only, as many of each.
    draw = draw <= 50 and 80 or 95
  end
  local kind, name, password
  local user = math.random(users)
  if draw <= 70 then
    kind, name, password = "valid", "user" .. user, "pass-" .. user .. "-horse"
  elseif draw <= 90 then
    kind, name, password = "wrong", "user" .. user, "wrong-" .. user .. "-horse"
  elseif draw <= 99 then
    kind, name, password = "unknown", "ghost" .. math.random(1000000), "pass-" .. user .. "-horse"
  else
    kind, name, password = "planted", "planted" .. math.random(planted), "pass-" .. user .. "-horse"
  end
  local headers = {["Content-Type"] = "application/json", ["X-Bench"] = kind .. ":" .. now_us()}
  return wrk.format("POST", "/login", headers, body(name, password))
end

function response(status, headers, _)
  local tag, retry = nil, "-"
  for key, value in pairs(headers) do
    local lower = string.lower(key)
    if lower == "x-bench" then
      tag = value
    elseif lower == "retry-after" then
      retry = value
    end
  end
  local kind, sent = "untagged", nil
  if tag ~= nil then
    local tagged_kind, tagged_sent = string.match(tag, "^(%a+):(%d+)$")
    if tagged_kind ~= nil then
      kind, sent = tagged_kind, tagged_sent
    end
  end
  local took = sent and (now_us() - tonumber(sent)) or -1
  table.insert(answers, kind .. " " .. status .. " " .. took .. " " .. retry)
end

function done(summary, _, _)
  for _, thread in ipairs(threads) do
    for _, line in ipairs(thread:get("answers")) do
      io.write("R " .. line .. "\n")
    end
  end
  local errors = summary.errors
  io.write(string.format("E %d %d %d %d\n", errors.connect, errors.read, errors.write, errors.timeout))
  io.write(string.format("S %d %d\n", summary.duration, summary.requests))
end
