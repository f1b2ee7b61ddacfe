-- Seeds a budget from PostgreSQL's truth unless another instance seeded its current window
-- already (never adds to what is there, so a second seeder cannot double it).
-- KEYS[1]: the budget's hash. ARGV: cap, used (spent + held), ends (Unix ms), scope, ttl ms.
local ends = tonumber(redis.call('HGET', KEYS[1], 'ends') or '0')
if ends >= tonumber(ARGV[3]) then
    return 0
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'cap', ARGV[1], 'used', ARGV[2], 'ends', ARGV[3], 'scope', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
