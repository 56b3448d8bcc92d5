CREATE SCHEMA "queen";
--> statement-breakpoint
CREATE TABLE "queen"."consumer_subscriptions" (
	"queue_id" bigint NOT NULL,
	"consumer_group" text NOT NULL,
	"mode" text NOT NULL,
	"start_at" timestamp with time zone,
	"subscribed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"scanned_at" timestamp with time zone,
	CONSTRAINT "consumer_subscriptions_pk" PRIMARY KEY("queue_id","consumer_group")
);
--> statement-breakpoint
CREATE TABLE "queen"."log_consumers" (
	"partition_id" bigint NOT NULL,
	"consumer_group" text NOT NULL,
	"committed" bigint DEFAULT -1 NOT NULL,
	"batch_end" bigint,
	"worker_id" text,
	"lease_expires_at" timestamp with time zone,
	"lease_acquired_at" timestamp with time zone,
	"batch_retry_count" integer DEFAULT 0 NOT NULL,
	"retry_offset" bigint,
	"retry_not_before" timestamp with time zone,
	"attempt_offset" bigint,
	"attempt_count" integer DEFAULT 0 NOT NULL,
	"total_consumed" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"queue_id" bigint,
	"pending" boolean DEFAULT true NOT NULL,
	CONSTRAINT "log_consumers_pk" PRIMARY KEY("partition_id","consumer_group")
);
--> statement-breakpoint
CREATE TABLE "queen"."log_dlq" (
	"partition_id" bigint NOT NULL,
	"consumer_group" text NOT NULL,
	"msg_offset" bigint NOT NULL,
	"message_id" uuid NOT NULL,
	"transaction_id" text NOT NULL,
	"trace_id" uuid,
	"producer_sub" text,
	"payload" "bytea" NOT NULL,
	"encrypted" boolean DEFAULT false NOT NULL,
	"error_message" text,
	"retry_count" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"failed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "log_dlq_pk" PRIMARY KEY("partition_id","consumer_group","msg_offset")
);
--> statement-breakpoint
CREATE TABLE "queen"."log_partitions" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "queen"."log_partitions_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"queue_id" bigint NOT NULL,
	"name" text DEFAULT 'Default' NOT NULL,
	"last_offset" bigint DEFAULT -1 NOT NULL,
	"log_start" bigint DEFAULT 0 NOT NULL,
	"txns_start" bigint DEFAULT 0 NOT NULL,
	"last_write_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "queen"."log_segments" (
	"partition_id" bigint NOT NULL,
	"base_offset" bigint NOT NULL,
	"end_offset" bigint NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"blob" "bytea" NOT NULL,
	CONSTRAINT "log_segments_pk" PRIMARY KEY("partition_id","base_offset")
);
--> statement-breakpoint
CREATE TABLE "queen"."log_txns" (
	"partition_id" bigint NOT NULL,
	"base_offset" bigint NOT NULL,
	"end_offset" bigint NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"hashes" "bytea" NOT NULL,
	CONSTRAINT "log_txns_pk" PRIMARY KEY("partition_id","base_offset")
);
--> statement-breakpoint
CREATE TABLE "queen"."queues" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "queen"."queues_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"tenant_id" text DEFAULT 'default' NOT NULL,
	"name" text NOT NULL,
	"namespace" text,
	"task" text,
	"lease_time" integer DEFAULT 60 NOT NULL,
	"retry_limit" integer DEFAULT 3 NOT NULL,
	"retry_delay" integer DEFAULT 0 NOT NULL,
	"dead_letter_queue" boolean DEFAULT true NOT NULL,
	"dlq_after_max_retries" boolean DEFAULT true NOT NULL,
	"delayed_processing" integer DEFAULT 0 NOT NULL,
	"window_buffer" integer DEFAULT 0 NOT NULL,
	"retention_enabled" boolean DEFAULT false NOT NULL,
	"retention_seconds" integer DEFAULT 0 NOT NULL,
	"completed_retention_seconds" integer DEFAULT 0 NOT NULL,
	"dedup_window_seconds" integer DEFAULT 3600 NOT NULL,
	"encryption_enabled" boolean DEFAULT false NOT NULL,
	"priority" integer DEFAULT 0 NOT NULL,
	"max_size" integer DEFAULT 0 NOT NULL,
	"ttl" integer DEFAULT 0 NOT NULL,
	"max_wait_time_seconds" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "queen"."consumer_subscriptions" ADD CONSTRAINT "consumer_subscriptions_queue_id_queues_id_fk" FOREIGN KEY ("queue_id") REFERENCES "queen"."queues"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "queen"."log_consumers" ADD CONSTRAINT "log_consumers_partition_id_log_partitions_id_fk" FOREIGN KEY ("partition_id") REFERENCES "queen"."log_partitions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "queen"."log_dlq" ADD CONSTRAINT "log_dlq_partition_id_log_partitions_id_fk" FOREIGN KEY ("partition_id") REFERENCES "queen"."log_partitions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "queen"."log_partitions" ADD CONSTRAINT "log_partitions_queue_id_queues_id_fk" FOREIGN KEY ("queue_id") REFERENCES "queen"."queues"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "queen"."log_segments" ADD CONSTRAINT "log_segments_partition_id_log_partitions_id_fk" FOREIGN KEY ("partition_id") REFERENCES "queen"."log_partitions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "idx_log_consumers_pending" ON "queen"."log_consumers" USING btree ("queue_id","consumer_group") WHERE pending;--> statement-breakpoint
CREATE INDEX "idx_log_dlq_partition_txn" ON "queen"."log_dlq" USING btree ("partition_id","transaction_id");--> statement-breakpoint
CREATE INDEX "idx_log_dlq_failed_at" ON "queen"."log_dlq" USING btree ("failed_at");--> statement-breakpoint
CREATE UNIQUE INDEX "log_partitions_queue_name_uk" ON "queen"."log_partitions" USING btree ("queue_id","name");--> statement-breakpoint
CREATE INDEX "idx_log_partitions_queue_write" ON "queen"."log_partitions" USING btree ("queue_id","last_write_at");--> statement-breakpoint
CREATE UNIQUE INDEX "queues_tenant_name_uk" ON "queen"."queues" USING btree ("tenant_id","name");--> statement-breakpoint
CREATE INDEX "idx_queues_tenant_namespace" ON "queen"."queues" USING btree ("tenant_id","namespace");--> statement-breakpoint
CREATE INDEX "idx_queues_tenant_task" ON "queen"."queues" USING btree ("tenant_id","task");