-- Takes a hold against every budget and the key's rate window, or refuses and takes nothing.
-- KEYS[1..n]: the budgets' hashes (cap, used = spent + held, ends = the window's end in Unix ms,
-- scope); KEYS[n+1]: the key's rate window prefix (the minute is appended, from Redis' clock);
-- KEYS[n+2]: the hold's record.
-- ARGV: n, amount (µ$), tokens, rpm (-1: none), tpm (-1: none), lease ms, the hold's record
-- (`amount|budget,budget`, or empty when PostgreSQL records nothing of the hold); the window
-- taken and the tokens are appended to it (`|window|tokens`), so an undo can give them back.
-- Answers {'ok'}, {'miss', i} (budget i is absent or its window ended: seed it from
-- PostgreSQL), {'budget', i, cap, ends, scope}, {'rpm', limit, wait s} or {'tpm', limit, wait s}.
local n = tonumber(ARGV[1])
local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
for i = 1, n do
    local b = redis.call('HMGET', KEYS[i], 'cap', 'used', 'ends', 'scope')
    if not b[1] or not b[3] or tonumber(b[3]) <= now_ms then
        return {'miss', i}
    end
    if tonumber(b[2]) + tonumber(ARGV[2]) > tonumber(b[1]) then
        return {'budget', i, b[1], b[3], b[4]}
    end
end
local window = ''
local rpm = tonumber(ARGV[4])
local tpm = tonumber(ARGV[5])
if rpm >= 0 or tpm >= 0 then
    local second = tonumber(time[1])
    window = KEYS[n + 1] .. ':' .. math.floor(second / 60)
    local wait = 60 - second % 60
    local r = redis.call('HMGET', window, 'requests', 'tokens')
    local requests = tonumber(r[1] or '0')
    local tokens = tonumber(r[2] or '0')
    if rpm >= 0 and requests + 1 > rpm then
        return {'rpm', ARGV[4], tostring(wait)}
    end
    if tpm >= 0 and tokens + tonumber(ARGV[3]) > tpm then
        return {'tpm', ARGV[5], tostring(wait)}
    end
    redis.call('HINCRBY', window, 'requests', 1)
    redis.call('HINCRBY', window, 'tokens', ARGV[3])
    redis.call('PEXPIRE', window, 120000)
end
for i = 1, n do
    redis.call('HINCRBY', KEYS[i], 'used', ARGV[2])
end
if ARGV[7] ~= '' then
    redis.call('SET', KEYS[n + 2], ARGV[7] .. '|' .. window .. '|' .. ARGV[3], 'PX', ARGV[6])
end
return {'ok'}
