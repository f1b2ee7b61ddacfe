-- Settles holds: each hold's amount leaves its budgets and the request's cost takes its place.
-- A hold already settled (or lost with a flush) changes nothing: PostgreSQL has the truth, and
-- the budget is seeded from it again when its entry expires.
-- KEYS: the holds' records. ARGV[1]: the budgets' key prefix; ARGV[i + 1]: request i's cost.
local settled = 0
for i, key in ipairs(KEYS) do
    local record = redis.call('GET', key)
    if record then
        redis.call('DEL', key)
        local amount, ids = string.match(record, '^(%d+)|([^|]*)')
        local delta = tonumber(ARGV[i + 1]) - tonumber(amount)
        for id in string.gmatch(ids, '[^,]+') do
            local budget = ARGV[1] .. id
            if redis.call('EXISTS', budget) == 1 then
                redis.call('HINCRBY', budget, 'used', string.format('%d', delta))
            end
        end
        settled = settled + 1
    end
end
return settled
