-- Undoes a hold Redis admitted but PostgreSQL refused (or could not record): its amount leaves
-- its budgets, and its request and tokens leave the key's rate window, since the request is
-- never made. A hold already settled or undone (or lost with a flush) changes nothing.
-- KEYS[1]: the hold's record. ARGV[1]: the budgets' key prefix.
local record = redis.call('GET', KEYS[1])
if not record then
    return 0
end
redis.call('DEL', KEYS[1])
local amount, ids, window, tokens = string.match(record, '^(%d+)|([^|]*)|([^|]*)|(%d*)$')
if not amount then
    amount, ids = string.match(record, '^(%d+)|([^|]*)')
end
if not amount then
    return 0
end
for id in string.gmatch(ids, '[^,]+') do
    local budget = ARGV[1] .. id
    if redis.call('EXISTS', budget) == 1 then
        redis.call('HINCRBY', budget, 'used', string.format('%d', -tonumber(amount)))
    end
end
if window and window ~= '' and redis.call('EXISTS', window) == 1 then
    redis.call('HINCRBY', window, 'requests', -1)
    redis.call('HINCRBY', window, 'tokens', string.format('%d', -tonumber(tokens ~= '' and tokens or '0')))
end
return 1
