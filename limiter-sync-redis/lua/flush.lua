-- flush.lua: applies one node's batch of counter deltas atomically and exactly once (its helpers are
-- in flush_lib.lua).
--
-- KEYS[1]      the node's sequence key for this group (same hash slot as every other key)
-- KEYS[2..n+1] one counter key per delta
-- KEYS[n+2]    regional quotas only (ARGV[4] > 0): the limit's demand index, a sorted set of the keys
--              seen per window (their counter keys), which the region coordinator reads (standalone
--              Redis only)
-- KEYS[last]  a batch that carries its node's heartbeat only (ARGV[7] not empty): the node registry
--              (heartbeat.lua's; standalone Redis only)
-- ARGV[1]      the batch's sequence number (per node and group, increasing); 0 marks a claim-only batch:
--              window deltas that ask for claims, without permits or with a take (below), applied
--              every time (a take's token keeps it from counting twice) and leaving the node's sequence
--              alone, so that a decision may ask for a claim while the node's flushes are on their way
-- ARGV[2]      sequence key TTL, seconds
-- ARGV[3]      the node's time, microseconds since the epoch
-- ARGV[4]      the demand index's TTL in ms, or 0 when the batch has no regional deltas
-- ARGV[5]      the node's id: the owner of the claims below
-- ARGV[6]      numbered batches: the sequence that created the node's sequence key, as the node last
--              learnt it (0: none yet); see the reply's second element
-- ARGV[7]      the node's registry name when the batch carries its heartbeat, else empty
-- ARGV[8]      the heartbeat's time, ms since the epoch (0 without one)
-- ARGV[9]      how long the heartbeat keeps the node alive, ms (0 without one)
-- then per delta, in KEYS order:
--   'w', window index, counter TTL in ms, amount, want, capacity, nodes, window length in us, need,
--        token, settle, ahead, ahead want, keep, allowed, spent, reserve, part -- window counts (sliding
--        window)
--   'f', the same but part                                 -- window counts (fixed window)
--   'o', window index, counter TTL in ms, amount           -- a fixed window's permits sent once the
--                                                            window is over: counted, nothing else
--   'g', scale, interval, amount                           -- GCRA backlog (token / leaky bucket)
--   'r', window index, counter TTL in ms, amount, denied   -- a region's count of a global quota
--
-- Window counts carry claims. A node's claim on a window is how many permits it may admit beyond
-- what the store has counted from it; the key keeps each node's claim ('c<window>:<node>') and their
-- sum ('C<window>'). A flush that asks for a claim (want > 0) is granted what is free, the capacity
-- less the count, the other nodes' claims and what this node may still admit under its old claim
-- while this flush was on its way (old claim - amount: committed, so kept; at most `keep` when that is
-- 0 or more: the node admits no more than that under its old claim until the answer comes, and the rest
-- is granted anew like what is free, so that a claim granted far from the limit does not stay whole with
-- one node near it while the others' requests are denied); all claims together hold
-- at most half of what no count holds, each node an even part of that (at most want); want 0 gives
-- the claim up. A node deciding a request it holds no claim for asks
-- for a claim of at least `need`: it gets that much whenever that much is free, even where the even
-- part is smaller (a small limit, many nodes, a cost above one); when less is free, only the even part
-- (a node alone: all that is free), so that a request denied anyway does not hold what the other nodes'
-- requests could use. Counts plus claims never pass the capacity, so nodes
-- that admit within their claims never pass it together, however late their flushes come. For a
-- sliding window the previous window's count and claims weigh as they fade at the node's time, and
-- what fades is budget freed continuously: each claimant also holds a part of it (prev / window / n
-- per us, for the n nodes it counted) from the time of its claim ('t<window>:<node>' = 'since:n',
-- the sums of since / n in 'T<window>' and of 1 / n in 'K<window>'), which it takes without a flush;
-- parts never add up to more than the whole: a node that counted fewer nodes than there are
-- claimants gets the part that is left, and learns its split from the answer. A 'w' delta whose part
-- is '0' asks for its claim without a part (split 0 in the answer): what fades stays here for
-- whichever node asks first (where the node's part would be a few permits, which it would hold from
-- the other nodes' requests).
--
-- Claims ahead (fixed windows; ahead > 0 with want > 0): the node also asks for a claim of `ahead want`
-- permits on each of the `ahead` windows after the delta's ('c<window>:<node>', 'C<window>', as
-- above), granted where every one of them has room for it (all nodes' claims ahead within an eighth
-- of the capacity, an even part per node): the same on each, never lowering what the node holds
-- there. The node admits within it in those windows without asking, and flushes what it admitted
-- there once each window is over: the claim counts against the limit whatever the node used of it.
--
-- Allowances (fixed windows and sliding window counters): a node may admit a few permits of a key in a
-- window without a claim and without asking (its allowance), and counts them here, `allowed` of the
-- delta's amount, after it did: counted like the others, but admitted under no claim, so the node's
-- claim is not charged for them. `reserve` is what all nodes' allowances may take of the window (the
-- flushing node's count of nodes times the allowance, while nodes may still use them; 0 from a margin
-- before the window's end), and `spent` how much of its allowance the node has spent on the window in
-- all (used, or given up where its claim pays for the key; what it used first, and the rest later, on a
-- key far below its limit), recorded per node ('a<window>:<node>') and
-- summed in 'A<window>', only its rise counting (so a replay, or a claim-only batch applied twice,
-- spends nothing more; a claim call may spend an allowance the node gives up unused): claims and takes
-- are granted out of the capacity less what is left of the reserve, so counts, claims and the
-- allowances not yet counted never pass the capacity together. On a sliding window the previous
-- window's count (and its claims) weigh too, whole at the window's start: they may fill the capacity
-- there (a reserve given back to the claims at that window's end), and nothing fits the reserve until
-- they have faded by it, at most a fraction reserve / capacity of the window. So where a claim finds
-- the counts and claims past what the capacity less the reserve left, the part of the fading it holds
-- starts no earlier than that fraction of what is left of the reserve ('t<window>:<node>' records the
-- later time, and the answer says it), and nodes use their allowances only after the whole reserve's
-- fraction: what fades first is the reserve's. (Where a claim finds room, counts, claims and parts
-- together only fall from then on: the part starts at once.)
--
-- Expiry: 'P' is the window P + 1 through which the key lives (its TTL was set for it by the write
-- that set 'P'): a write that needs the key to live through its window's next one (or the last
-- window it claimed ahead) sets the TTL only when 'P' falls short, and then a few windows further
-- (expirySlack), so that a key written window after window sets it every ninth window; the exact
-- scripts and leases on the same key never shorten it (prelude.lua's keptTtl).
--
-- Takes: in a claim-only batch a window delta's amount, if any, is a take with a token (the node's,
-- above every one it used before): it is counted, and taken out of the claim, only if the claim
-- granted covers `need` (which includes it), and only if the key has not recorded this node's token
-- at least as high for the window ('x<window>:<node>'); a take counted records its token. A take whose
-- answer never reached the node is settled by a numbered batch (token, settle): settle > 0 (the
-- failure policy admitted the request) counts settle permits unless the take counted them; settle < 0
-- (it denied it) takes -settle back if the take counted them; the token is recorded either way, so
-- the take, should it still arrive, is ignored. A take counted on a delta that asks for no more than
-- its need (want = need) also holds no part of a sliding window's fading.
--
-- Demand met: a take's need less the take is what the node has admitted under its claim and not
-- counted yet; the key keeps it ('u<window>:<node>', at most the claim, less what the node's later
-- flushes count; their sum in 'U<window>'). Claims are sized as if it were counted: all claims less
-- what their nodes met hold at most half of what no count or met demand holds. (Counted as claims
-- ahead of demand, a hot key's used claims left nothing to grant near its limit until the next
-- regular sync, and every request there was a take of its own.)
--
-- Returns {applied, created, ...} with, per delta:
--   window: count of that window, count of the window before it (0 for 'f': a fixed window's
--           previous count never weighs), the node's claim on the window after this flush, for
--           'w' the nodes its part of the fading is split by (0: none; 'f': 0), 1 if a take
--           was counted (else 0), and for 'f' the claim granted on each window ahead (0: none),
--           for 'w' when its part of the fading starts where that is later than the call's time
--           (us from the window's start; else 0); 'o' the same layout: its count, then 0s
--   gcra:   backlog in scaled units at the node's time, 0
--   region: count of that window, count of the window before it, the region's share of the quota
--           for that window and for the next one (-1 where the coordinator's lease does not reach:
--           the node then enforces the static share)
-- and, last, when the batch carries a heartbeat, the nodes alive in the registry, this one included
-- (the beat is recorded whether or not the batch is applied).
-- applied is 0 when the sequence was seen before (a retry or a replay after reconnect): nothing is
-- applied and the current values are returned, so a retried flush never counts twice. created (0 for a
-- claim-only batch) is the sequence of the batch that created the node's sequence key: its first
-- batch, or the first after the key vanished (expired, or the store lost its data). A node that knew
-- another one learns that the key was created again, even when the batch that did so was a replay
-- whose answer it never saw; the caller, which knows when it last wrote the key, tells a loss from an
-- expiry.
--
-- All numbers stay integers below 2^53 (Lua numbers are doubles): counts, window indexes, and
-- backlogs bounded by the limit's burst, checked by the caller.

local indexTtl = tonumber(ARGV[4])
local beatNode = ARGV[7]
local n = #KEYS - 1
if indexTtl ~= nil and indexTtl > 0 then
  n = n - 1
end
local beatNow, beatTtl
if beatNode ~= nil and beatNode ~= '' then
  n = n - 1
  beatNow, beatTtl = tonumber(ARGV[8]), tonumber(ARGV[9])
  if beatNow == nil or beatTtl == nil or beatTtl <= 0 then
    return fail('a heartbeat needs a time and a positive ttl, got ' .. tostring(ARGV[8]) .. ' and ' .. tostring(ARGV[9]))
  end
end
if n < 1 or indexTtl == nil then
  return fail('expected a sequence key, counter keys and a demand index TTL, got '
      .. #KEYS .. ' keys and ' .. tostring(ARGV[4]))
end
-- the layout is checked before anything is written: a script that fails half way keeps its writes.
-- HEAD and width are the layout, written once here (FlushWire, the Java side, is tested against them):
-- the arguments before the first delta's, and per kind the arguments of a delta, its kind included
local HEAD = 9
local width = {w = 18, f = 17, o = 4, g = 4, r = 5}
local cursor = HEAD + 1
for _ = 1, n do
  local step = width[ARGV[cursor]]
  if step == nil then
    return fail('unknown counter kind ' .. tostring(ARGV[cursor]))
  end
  cursor = cursor + step
end
if cursor ~= #ARGV + 1 then
  return fail(#ARGV .. ' arguments do not match ' .. n .. ' deltas')
end

local seq = tonumber(ARGV[1])
local apply = true
local created = '0'
if seq == 0 then
  -- claim only: every delta a window delta without permits
  cursor = HEAD + 1
  for _ = 1, n do
    local kind = ARGV[cursor]
    if (kind ~= 'w' and kind ~= 'f') or (tonumber(ARGV[cursor + 3]) ~= 0 and tonumber(ARGV[cursor + 9]) <= 0)
        or tonumber(ARGV[cursor + 10]) ~= 0 or tonumber(ARGV[cursor + 14]) ~= 0 then
      return fail('a claim-only batch carries window deltas without permits, or takes (no allowed permits)')
    end
    cursor = cursor + width[kind]
  end
else
  -- one command in the usual case: record this sequence and read the one before it; a replay (the
  -- sequence was seen) puts the newer one back
  -- the key holds '<sequence>|<the sequence that created it>'; written as the node expects it (one
  -- command), or, where it did not exist, as created by this batch
  local previous = redis.call('SET', KEYS[1], ARGV[1] .. '|' .. ARGV[6], 'EX', ARGV[2], 'GET')
  local previousSeq = -1
  if previous == false then
    created = ARGV[1]
    redis.call('SET', KEYS[1], ARGV[1] .. '|' .. created, 'EX', ARGV[2])
  else
    local bar = string.find(previous, '|', 1, true)
    previousSeq = tonumber(bar and string.sub(previous, 1, bar - 1) or previous)
    -- (a value written before creators were recorded names none: this batch stands for it)
    created = bar and string.sub(previous, bar + 1) or ARGV[1]
    if created ~= ARGV[6] then
      redis.call('SET', KEYS[1], ARGV[1] .. '|' .. created, 'EX', ARGV[2])
    end
  end
  apply = seq > previousSeq
  if not apply then
    redis.call('SET', KEYS[1], previous, 'EX', ARGV[2])
  end
end
local now = tonumber(ARGV[3])
local node = ARGV[5]
local out = {apply and 1 or 0, tonumber(created)}

cursor = HEAD + 1
for i = 1, n do
  local key = KEYS[i + 1]
  local kind = ARGV[cursor]
  if kind == 'w' or kind == 'f' then
    local w = tonumber(ARGV[cursor + 1])
    local ttl = ARGV[cursor + 2]
    local amount = tonumber(ARGV[cursor + 3])
    local want = tonumber(ARGV[cursor + 4])
    local capacity = tonumber(ARGV[cursor + 5])
    local nodes = tonumber(ARGV[cursor + 6])
    local windowMicros = tonumber(ARGV[cursor + 7])
    local need = tonumber(ARGV[cursor + 8])
    local token = tonumber(ARGV[cursor + 9])
    local settle = tonumber(ARGV[cursor + 10])
    local ahead = tonumber(ARGV[cursor + 11])
    local aheadWant = tonumber(ARGV[cursor + 12])
    local keep = tonumber(ARGV[cursor + 13])
    -- of the amount, the permits admitted under the node's allowance, and the allowances' reserve
    -- (fixed windows; see Allowances above)
    local allowed = tonumber(ARGV[cursor + 14])
    local spent = tonumber(ARGV[cursor + 15])
    local reserve = tonumber(ARGV[cursor + 16])
    if allowed == nil or spent == nil or reserve == nil or allowed < 0 or allowed > amount or spent < 0
        or reserve < 0 then
      return fail('allowed must be 0..amount, spent and reserve 0 or more, got '
          .. tostring(ARGV[cursor + 14]) .. ', ' .. tostring(ARGV[cursor + 15]) .. ' and ' .. tostring(ARGV[cursor + 16]))
    end
    -- a sliding window's claim asked for without a part of the fading ('0'; see below)
    local withoutPart = kind == 'w' and ARGV[cursor + 17] == '0'
    cursor = cursor + width[kind]
    -- a claim-only batch's amount is a take: counted below only if the claim covers the need
    local take = 0
    if seq == 0 then
      take, amount = amount, 0
    end
    local sliding = kind == 'w'
    local ws = digits(w)
    local claimField, sumField, tokenField = 'c' .. ws .. ':' .. node, 'C' .. ws, 'x' .. ws .. ':' .. node
    local allowedField = 'A' .. ws -- (the allowances spent)
    local spentByField = 'a' .. ws .. ':' .. node -- (what this node has spent of its allowance, in all)
    local metField, metSum = 'u' .. ws .. ':' .. node, 'U' .. ws
    -- (a sliding window's own fields, named only for it: every name is a string the script builds)
    local ps, sinceField, sinceSum, claimants
    -- one read and at most one write per key
    -- claims ahead asked for (fixed windows): their windows' fields are read with the others
    local aheadAsked = apply and not sliding and ahead > 0 and aheadWant > 0 and want > 0
    local names = aheadAsked and aheadNames(node, w, ahead) or nil
    local v
    if sliding then
      ps = digits(w - 1)
      sinceField, sinceSum, claimants = 't' .. ws .. ':' .. node, 'T' .. ws, 'K' .. ws
      local pps = digits(w - 2)
      v = redis.call('HMGET', key, ws, claimField, sumField, ps, 'C' .. ps, sinceField, sinceSum, claimants,
          pps, 'T' .. ps, 'K' .. ps, 'h', tokenField, 'P', metField, metSum, allowedField, spentByField)
    elseif names then
      v = redis.call('HMGET', key, ws, claimField, sumField, 'h', tokenField, 'P', metField, metSum, allowedField,
          spentByField, unpack(names))
    else
      v = redis.call('HMGET', key, ws, claimField, sumField, 'h', tokenField, 'P', metField, metSum, allowedField,
          spentByField)
    end
    -- the allowances spent on the window, this delta's included (not by a replay, which applies nothing):
    -- a delta carries what its node has spent in all, so a take applied twice spends once
    local spentBy = spent
    spent = apply and math.max(0, spentBy - tonumber(v[sliding and 18 or 10] or '0')) or 0
    local spentAll = tonumber(v[sliding and 17 or 9] or '0') + spent
    -- what claims and takes are granted out of: the capacity less what is left of the allowances' reserve
    local grantable = capacity - math.max(0, reserve - spentAll)
    -- what of its claim the node has admitted and not counted, as it last said, and all nodes' sum
    local heldMet = tonumber(v[sliding and 15 or 7] or '0')
    local metAll = tonumber(v[sliding and 16 or 8] or '0')
    local dropMark = v[sliding and 12 or 4] or nil
    -- 'P': the key lives through window P + 1 (its TTL was set for that, with the write that set 'P');
    -- a 'P' further ahead than any write sets it was written in windows of another length (the limit's
    -- window changed under its name) and says nothing about these
    local livesThrough = tonumber(v[sliding and 14 or 6] or 'x')
    if livesThrough ~= nil and livesThrough - w > MAX_MARK_AHEAD then
      livesThrough = nil
    end
    local seenToken = tonumber(v[sliding and 13 or 5] or '0')
    local taken = 0
    local aheadGranted = 0
    -- (a sliding window's claimant: when its part of the fading starts, us from the window's start;
    -- and whether the counts and claims passed what the capacity less the reserve left, see below)
    local partFrom = 0
    local inDeficit = false
    local cur = tonumber(v[1] or '0')
    local held = tonumber(v[2] or '0')
    local claims = tonumber(v[3] or '0')
    -- a sliding window's claimant: the time of its claim and the nodes it split the fading by ('since:n')
    local prev, since, split, sinces, shares = 0, nil, nodes, 0, 0
    if sliding then
      prev = tonumber(v[4] or '0')
      if v[6] then
        local s, d = string.match(v[6], '^(%-?[%d.]+):(%d+)$')
        since, split = tonumber(s or v[6]), tonumber(d or nodes)
      end
      if since ~= nil and since < 0 then
        since = nil -- gave its claim up
      end
      partFrom = since or 0
      sinces = tonumber(v[7] or '0')
      shares = tonumber(v[8] or '0')
    end
    -- claim times are kept from the window's start (sums of epoch times would pass 2^53)
    local at = math.min(windowMicros, math.max(0, now - w * windowMicros))
    -- the nodes this node's part of the fading is split by after this flush (0: not a claimant)
    local grantSplit = since ~= nil and split or 0
    if apply then
      cur = cur + amount
      local claim = 0
      local fields = {ws, 0} -- the count goes in once takes and settles are in it
      if settle ~= 0 then
        local counted = seenToken >= token
        if settle > 0 and not counted then
          cur = cur + settle
        elseif settle < 0 and counted then
          cur = cur + settle
        end
        if not counted then
          fields[#fields + 1] = tokenField
          fields[#fields + 1] = digits(token)
        end
      end
      -- what of its claim the node has admitted and not counted: a take says it anew (its need less
      -- the take), a flush counts some of it (a take's need may also hold permits a flush on its way
      -- has counted, and on a sliding window the previous window's at their weight: never more than
      -- the claim, so a grant stays within what is free, only a little larger); permits admitted under
      -- the node's allowance were not under its claim
      local charged = amount - allowed
      local met = heldMet - charged
      if take > 0 then
        met = need - take
      end
      if met < 0 then
        met = 0
      end
      if want > 0 then
        grantSplit = nodes
        -- a sliding window's previous count fades at prev / window per us: each claimant also holds
        -- a part of that, 1 / n of it for the n nodes it split by, from the time of its claim (its
        -- 'since'); the nodes take it without a flush, so it is counted as claimed here
        local fade = prev / windowMicros
        local committed = held - charged
        if keep >= 0 and committed > keep then
          committed = keep
        end
        if since ~= nil then
          committed = committed + math.floor(fade / split * math.max(0, at - since))
        end
        -- a window that is over at the node's time: the node admits nothing more there, so what it
        -- keeps bounds its claim and its part of the fading together (a claim call trims a sliding
        -- window's claim on the window gone by to the permits the node has not counted)
        if keep >= 0 and at >= windowMicros and committed > keep then
          committed = keep
        end
        if committed < 0 then
          committed = 0
        end
        local used = cur + (claims - held) + committed
        if sliding then
          -- the previous window's count, the claims on it, and its claimants' parts of what faded
          -- there (to its end: taken without a flush, so possibly not counted yet), all fading now
          local prevFlow = tonumber(v[9] or '0') / windowMicros
              * math.max(0, tonumber(v[11] or '0') * windowMicros - tonumber(v[10] or '0'))
          -- (a claimant takes a permit only once its part is half-way to it: parts under half a permit in
          -- all left none taken, and a fraction counted as taken denied a limit of 1 its permit for a
          -- whole window)
          if prevFlow < 0.5 - 1e-9 then
            prevFlow = 0
          end
          used = used + (prev + tonumber(v[5] or '0') + prevFlow) * (windowMicros - at) / windowMicros
          -- the other claimants' parts of what faded since their claims ('K' sums their 1 / n, 'T'
          -- their since / n, so nodes that count different numbers of nodes are each counted at
          -- their own part)
          local others, othersSince = shares, sinces
          if since ~= nil then
            others, othersSince = shares - 1 / split, sinces - since / split
          end
          used = used + fade * math.max(0, others * at - othersSince)
          -- the parts never add up to more than the whole: a node that counted fewer nodes than
          -- there are claimants gets the part that is left (none when none is)
          if others + 1 / nodes > 1 + 1e-9 then
            grantSplit = 0
            if others < 1 - 1e-9 then
              grantSplit = math.ceil(1 / (1 - others) - 1e-9)
              if grantSplit > 4095 then
                grantSplit = 0
              end
            end
          end
        end
        local free = math.floor(grantable - used)
        inDeficit = free < 0
        local extra = 0
        if free > 0 then
          -- claims held ahead of demand take at most half of what no count holds (each node an even
          -- part of it), so that unused claims of other nodes never deny a key below half its limit
          -- (rounded down: near the limit nodes hold nothing ahead, and each permit goes to the node
          -- that has a request for it)
          -- (what the nodes said they met of their claims is demand, not held ahead of it, and weighs
          -- as counted)
          local spare = math.floor((free - (claims - held) - committed + metAll - heldMet
              + math.min(met, committed)) / 2)
          if spare > 0 then
            extra = math.floor(spare / nodes)
          end
          -- what the node needs for the request it is deciding, when that much is free; when less is,
          -- all of it only to a node alone on a sliding window (the fading then adds to it until the
          -- request fits): among several, what is free held for a request the node denies anyway would
          -- deny every other node's requests until this node gave it up; and a fixed window frees
          -- nothing before it ends, while a node counts itself alone at start-up until the registry has
          -- heard the others
          if need - committed > extra and (need - committed <= free or (nodes == 1 and sliding)) then
            extra = math.min(need - committed, free)
          end
        end
        if extra > want - committed then
          extra = want - committed
        end
        if extra < 0 then
          extra = 0
        end
        claim = committed + extra
        if take > 0 and seenToken < token and claim >= need then
          cur = cur + take
          claim = claim - take
          taken = 1
          fields[#fields + 1] = tokenField
          fields[#fields + 1] = digits(token)
          if want == need then
            -- nothing asked beyond this decision (a cold key): no part of a sliding window's fading
            -- either, which would block the other nodes until a flush gave it up
            grantSplit = 0
          end
        end
      end
      if claim ~= held then
        setWithSum(fields, claimField, claim, sumField, claims - held + claim)
      end
      if met > claim then
        met = claim
      end
      if met ~= heldMet then
        setWithSum(fields, metField, met, metSum, metAll - heldMet + met)
      end
      if sliding and (want > 0 or since ~= nil) then
        -- a claimant from now on (its part of the fading restarts with this claim), or none; none too
        -- for a claim asked for without a part (where the node's part over its next syncs would be a
        -- few permits: what fades stays here for whichever node asks first)
        if want == 0 or withoutPart then
          grantSplit = 0
        end
        -- (where the previous window still weighs past what the allowances' reserve leaves, a part
        -- starts once it has faded by what is left of the reserve: see Allowances above)
        local newSince = nil
        if grantSplit > 0 then
          newSince = inDeficit and math.max(at, partStart(windowMicros, reserve - spentAll, capacity)) or at
        end
        partFrom = newSince or 0
        local newShares = shares + (newSince and 1 / grantSplit or 0) - (since and 1 / split or 0)
        local newSinces = sinces + (newSince and newSince / grantSplit or 0) - (since and since / split or 0)
        fields[#fields + 1] = sinceField
        fields[#fields + 1] = newSince and (digits(newSince) .. ':' .. digits(grantSplit)) or '-1'
        fields[#fields + 1] = sinceSum
        fields[#fields + 1] = string.format('%.17g', newSinces)
        fields[#fields + 1] = claimants
        fields[#fields + 1] = string.format('%.17g', newShares)
      end
      if spent > 0 then
        fields[#fields + 1] = allowedField
        fields[#fields + 1] = digits(spentAll)
        fields[#fields + 1] = spentByField
        fields[#fields + 1] = digits(spentBy)
      end
      if v[1] == false then
        fields[#fields + 1] = 'h'
        fields[#fields + 1] = firstWindowWrite(key, w, sliding and w - 2 or w - 1, dropMark)
      end
      fields[2] = digits(cur)
      if names then
        aheadGranted = claimAhead(names, v, 11, ahead, aheadWant, capacity, nodes, fields)
      end
      -- the key must live through the window after w (where a sliding window's count still weighs),
      -- or after the last one claimed ahead; a TTL set for that reaches a few windows further, and
      -- 'P' records how far, so that later writes need not set it again (nor shorten it)
      local through = aheadGranted > 0 and w + ahead or w
      if livesThrough == nil or livesThrough < through then
        local mark = through + expirySlack(windowMicros)
        fields[#fields + 1] = 'P'
        fields[#fields + 1] = digits(mark)
        redis.call('HSET', key, unpack(fields))
        redis.call('PEXPIRE', key, tonumber(ttl) + (mark - w) * math.floor(windowMicros / 1000))
      else
        redis.call('HSET', key, unpack(fields))
      end
      held = claim
    end
    out[#out + 1] = cur
    out[#out + 1] = prev
    out[#out + 1] = held
    out[#out + 1] = sliding and grantSplit or 0
    out[#out + 1] = taken
    -- (a part that starts later than this call's time, else 0: the node's part starts at its claim)
    out[#out + 1] = sliding and (partFrom > at and math.floor(partFrom) or 0) or aheadGranted
  elseif kind == 'o' then
    -- a fixed window that is over: a claim on it weighs nowhere now, so its permits are counted and
    -- nothing else (every admitted hit reaches the store once): one command, not a read and a write of
    -- the key's claims. A key gone meanwhile (expired) gets its TTL back with the count.
    local w = tonumber(ARGV[cursor + 1])
    local ttl = ARGV[cursor + 2]
    local amount = tonumber(ARGV[cursor + 3])
    cursor = cursor + width.o
    local c
    if apply and amount > 0 then
      c = redis.call('HINCRBY', key, digits(w), amount)
      if c == amount and redis.call('PTTL', key) == -1 then
        redis.call('PEXPIRE', key, ttl)
      end
    else
      c = tonumber(redis.call('HGET', key, digits(w)) or '0')
    end
    out[#out + 1] = c
    out[#out + 1] = 0
    out[#out + 1] = 0
    out[#out + 1] = 0
    out[#out + 1] = 0
    out[#out + 1] = 0
  elseif kind == 'r' then
    local w = tonumber(ARGV[cursor + 1])
    local ttl = ARGV[cursor + 2]
    local amount = tonumber(ARGV[cursor + 3])
    local c
    if apply then
      c = addRegionalCount(key, w, amount, ttl)
    else
      c = tonumber(redis.call('HGET', key, tostring(w)) or '0')
    end
    out[#out + 1] = c
    out[#out + 1] = tonumber(redis.call('HGET', key, tostring(w - 1)) or '0')
    local denied = tonumber(ARGV[cursor + 4])
    cursor = cursor + width.r
    if apply then
      if denied > 0 then
        redis.call('HINCRBY', key, 'd' .. digits(w), denied)
      end
      if c == amount then
        -- first write of the window: the coordinator finds the key through the index
        local index = KEYS[n + 2]
        redis.call('ZADD', index, w, key)
        redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. digits(w - 1))
        redis.call('PEXPIRE', index, indexTtl)
      end
    end
    local record = redis.call('HMGET', key, 's:w', 's:v', 's:n', 's:x')
    out[#out + 1] = shareFor(record, w)
    out[#out + 1] = shareFor(record, w + 1)
  else -- 'g' (the layout check above let no other kind through)
    local amount = tonumber(ARGV[cursor + 3])
    local scale = tonumber(ARGV[cursor + 1])
    local interval = tonumber(ARGV[cursor + 2])
    cursor = cursor + width.g
    local at, backlog = bucketAt(key, now, scale)
    if apply then
      backlog = backlog + amount * interval
      redis.call('HSET', key, 'b', digits(at), 't', digits(backlog))
      -- the state is at rest (equal to a fresh one) once the backlog has drained
      redis.call('PEXPIRE', key, digits(math.floor(backlog / scale / 1000) + 1000))
    end
    out[#out + 1] = backlog
    out[#out + 1] = 0
  end
end

if beatNow then
  -- the node's heartbeat, answered last: a working node's flushes keep it in the registry
  out[#out + 1] = beat(KEYS[#KEYS], beatNode, beatNow, beatTtl)
end
return out
