-- flush_lib.lua: the helpers of flush.lua (LuaScript puts those flush.lua names, after the prelude's,
-- before the script's own text: Redis runs each script on its own). Each is a function of its
-- arguments and the key it is given; none reads the script's own state.

-- the first write of window w of a window count ('w', 'f'), before the write (which then makes the
-- key live through the next window): windows before `keep` are dropped at every fourth window written
-- (every field is named by its window, so an older one is never read; 'h' keeps the window of the
-- last drop and the windows written since, '<window>:<written>', read with the key's other fields):
-- a key written window after window costs one command here, not four, and holds the fields of at most
-- six windows; a key written now and then drops as seldom, not at each write. A key without 'h' is new
-- (or was written only by the exact scripts, which drop their own): it has nothing to drop. Returns
-- the value to record in 'h'.
local function firstWindowWrite(key, w, keep, mark)
  if mark == nil then
    return digits(w) .. ':0'
  end
  local dropped, written = string.match(mark, '^(%-?%d+):?(%d*)$')
  written = (tonumber(written) or 0) + 1
  if dropped == nil or written < 4 then
    return (dropped or digits(w)) .. ':' .. digits(written)
  end
  dropWindowsBefore(key, keep)
  return digits(w) .. ':0'
end

-- a node's field set to `value` and the key's sum of those fields to `sum`, in the fields to write
local function setWithSum(fields, field, value, sumField, sum)
  fields[#fields + 1] = field
  fields[#fields + 1] = digits(value)
  fields[#fields + 1] = sumField
  fields[#fields + 1] = digits(sum)
end

-- the fields of the claims ahead of window w (fixed windows): per window ahead, its count, this
-- node's claim on it and the sum of the claims on it, read with the key's other fields
local function aheadNames(node, w, ahead)
  local names = {}
  for i = 1, ahead do
    local fw = digits(w + i)
    names[#names + 1] = fw
    names[#names + 1] = 'c' .. fw .. ':' .. node
    names[#names + 1] = 'C' .. fw
  end
  return names
end

-- a claim of up to `want` permits on each of the `ahead` windows after w (fixed windows), the same
-- on each, where all of them have room for it: all nodes' claims ahead hold at most an eighth of the
-- capacity (an even part per node of what the others left of it, less any count), since a key that
-- warms up finds its claims ahead spread over nodes whether or not its requests go there; what the
-- node holds there already is never lowered. `v` holds aheadNames' values from `at` on; the fields
-- to write go in `fields`. Returns the claim granted (0: none).
local function claimAhead(names, v, at, ahead, want, capacity, nodes, fields)
  local grant = want
  for i = 1, ahead do
    local counted = tonumber(v[at + 3 * i - 3] or '0')
    local others = tonumber(v[at + 3 * i - 1] or '0') - tonumber(v[at + 3 * i - 2] or '0')
    local room = math.floor((math.floor(capacity / 8) - counted - others) / nodes)
    if room < grant then
      grant = room
    end
  end
  if grant < 1 then
    return 0
  end
  for i = 1, ahead do
    local mine = tonumber(v[at + 3 * i - 2] or '0')
    if grant > mine then
      local others = tonumber(v[at + 3 * i - 1] or '0') - mine
      setWithSum(fields, names[3 * i - 1], grant, names[3 * i], others + grant)
    end
  end
  return grant
end

-- How far into a sliding window (us) the previous window's count, which weighs whole at the window's
-- start and may fill the capacity, has faded by `reserve` (what is left of the allowances' reserve) at
-- the latest: a claim that finds no room holds its part of the fading from then (Delta#partStartMicros
-- computes the same).
local function partStart(windowMicros, reserve, capacity)
  if reserve <= 0 then
    return 0
  end
  return math.floor(windowMicros * reserve / capacity)
end

-- windows a key's TTL reaches beyond the one it must (see the 'P' field below): a key written window
-- after window then sets its TTL every ninth window, not at each, and a key whose claims ahead are
-- renewed every few windows at one renewal in two or three (eight windows of at most 20 s more of life
-- for a key seen once; two windows of slack, Zipf over 1,000 keys on 4 nodes spent 133 PEXPIREs per
-- 1,000 decisions, 81 with eight)
local function expirySlack(windowMicros)
  return math.min(8, math.floor(20000000 / windowMicros))
end
