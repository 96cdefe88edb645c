-- Argo CD health of the apf-operator's objects (flowcontrol.apf-operator.io RequestPriority,
-- FlowSchema and EventRateLimit), read from the status the operator writes. One script serves
-- the three kinds. docs/gitops.md explains each verdict; argocd-cm-health.yaml is generated
-- from this file by `make argocd-snippet` (a test fails while it is stale). Argo CD runs custom
-- health scripts without Lua's string library (useOpenLibs is off by default): only base
-- functions, table and a safe os are available, so the script concatenates with "..".
--
--   Progressing  no status yet; status.observedGeneration ~= metadata.generation;
--                Ready absent or Unknown; Projected Unknown, or False with reason Pending
--   Degraded     Ready False (any reason: DuplicatePriorityLevel, RequestPriorityNotFound,
--                InvalidSpec, EnforcementDisabled, ...); Projected False with any other
--                reason (NotExpressible, NameConflict, PrecedenceExhausted, ...)
--   Healthy      Ready True, and Projected True or absent (enforcement "none")

local function findCondition(conditions, conditionType)
  if conditions == nil then
    return nil
  end
  for _, c in ipairs(conditions) do
    if c.type == conditionType then
      return c
    end
  end
  return nil
end

local function describe(c)
  local text = c.reason or "NoReason"
  if c.message ~= nil and c.message ~= "" then
    text = text .. ": " .. c.message
  end
  return text
end

local function verdict(obj)
  local status = obj.status
  if status == nil or status.observedGeneration == nil then
    return "Progressing", "Waiting for the operator to report status"
  end
  local generation = obj.metadata.generation
  if generation ~= nil and status.observedGeneration ~= generation then
    return "Progressing", "Waiting for the operator to observe generation " .. generation ..
      " (status is of generation " .. status.observedGeneration .. ")"
  end
  local ready = findCondition(status.conditions, "Ready")
  if ready == nil or ready.status == "Unknown" then
    return "Progressing", "Waiting for the operator to report Ready"
  end
  if ready.status ~= "True" then
    return "Degraded", describe(ready)
  end
  local projected = findCondition(status.conditions, "Projected")
  if projected ~= nil and projected.status ~= "True" then
    local text = "Projected=" .. (projected.status or "") .. ", " .. describe(projected)
    if projected.status == "Unknown" or projected.reason == "Pending" then
      return "Progressing", text
    end
    return "Degraded", text
  end
  return "Healthy", describe(ready)
end

local hs = {}
hs.status, hs.message = verdict(obj)
return hs
