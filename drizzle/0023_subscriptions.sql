CREATE TABLE "queen"."subscription_attempts" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "queen"."subscription_attempts_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"subscription_id" uuid NOT NULL,
	"partition_id" bigint NOT NULL,
	"from_offset" bigint NOT NULL,
	"to_offset" bigint NOT NULL,
	"webhook_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"outcome" text NOT NULL,
	"status" integer,
	"error" text,
	"latency_ms" integer NOT NULL,
	"response" text,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "queen"."subscriptions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"queue_id" bigint NOT NULL,
	"name" text NOT NULL,
	"consumer_group" text NOT NULL,
	"url" text NOT NULL,
	"state" text DEFAULT 'active' NOT NULL,
	"paused_reason" text,
	"batch_size" integer DEFAULT 10 NOT NULL,
	"max_in_flight" integer DEFAULT 16 NOT NULL,
	"timeout_ms" integer DEFAULT 15000 NOT NULL,
	"rate_limit" integer DEFAULT 0 NOT NULL,
	"retry_base_ms" integer DEFAULT 1000 NOT NULL,
	"retry_max_ms" integer DEFAULT 300000 NOT NULL,
	"subscription_mode" text DEFAULT 'all' NOT NULL,
	"disable_after_ms" bigint DEFAULT 86400000 NOT NULL,
	"headers" text DEFAULT '{}' NOT NULL,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_until" timestamp with time zone,
	"failing_since" timestamp with time zone,
	"delivered" bigint DEFAULT 0 NOT NULL,
	"failed_attempts" bigint DEFAULT 0 NOT NULL,
	"dead_lettered" bigint DEFAULT 0 NOT NULL,
	"last_attempt_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "subscriptions_state_check" CHECK (state IN ('active', 'paused'))
);
--> statement-breakpoint
ALTER TABLE "queen"."subscription_attempts" ADD CONSTRAINT "subscription_attempts_subscription_id_subscriptions_id_fk" FOREIGN KEY ("subscription_id") REFERENCES "queen"."subscriptions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "queen"."subscriptions" ADD CONSTRAINT "subscriptions_queue_id_queues_id_fk" FOREIGN KEY ("queue_id") REFERENCES "queen"."queues"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "idx_subscription_attempts_sub" ON "queen"."subscription_attempts" USING btree ("subscription_id","id" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "subscriptions_queue_name_uk" ON "queen"."subscriptions" USING btree ("queue_id","name");--> statement-breakpoint
CREATE INDEX "idx_subscriptions_tenant_queue" ON "queen"."subscriptions" USING btree ("tenant_id","queue_id");--> statement-breakpoint
CREATE INDEX "idx_subscriptions_active" ON "queen"."subscriptions" USING btree ("queue_id") WHERE state = 'active';