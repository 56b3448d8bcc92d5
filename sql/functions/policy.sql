-- Policy: the numbers a deployment might want to tune, each in a function of its own so a change of
-- policy is a change of one short function (then `npm run db:migration`). They are SQL functions the
-- planner inlines into their callers, so they cost nothing at run time.

-- When a failed message may be delivered again (SPEC §3.3): retryDelay (ms) after the failure, or
-- at once when it is 0. p_retries counts the failures of this offset so far, this one included (1
-- on the first), for a back-off that grows.
CREATE OR REPLACE FUNCTION queen.retry_not_before(p_now timestamp with time zone, p_retry_delay_ms integer, p_retries integer)
 RETURNS timestamp with time zone
 LANGUAGE sql
 STABLE
AS $function$
  SELECT CASE WHEN p_retry_delay_ms > 0 THEN p_now + make_interval(secs => p_retry_delay_ms / 1000.0) END
$function$;

-- Whether a message that failed p_retries times before may be retried once more under a queue's
-- retryLimit, rather than dead-lettered (SPEC §3.3).
CREATE OR REPLACE FUNCTION queen.retry_allowed(p_retries integer, p_retry_limit integer)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT p_retries + 1 <= p_retry_limit $function$;

-- How long a push delivery's lease outlives the request that carries it: the subscription's
-- timeoutMs plus 5 s, so a dispatcher that is still waiting for the endpoint's answer never sees
-- its batch claimed again (docs/delivery.md#dispatch).
CREATE OR REPLACE FUNCTION queen.delivery_lease_expiry(p_now timestamp with time zone, p_timeout_ms integer)
 RETURNS timestamp with time zone
 LANGUAGE sql
 STABLE
AS $function$ SELECT p_now + make_interval(secs => (p_timeout_ms + 5000) / 1000.0) $function$;
