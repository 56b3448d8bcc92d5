CREATE TABLE "queen"."message_trace_names" (
	"trace_id" uuid NOT NULL,
	"tenant_id" text NOT NULL,
	"trace_name" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "message_trace_names_pk" PRIMARY KEY("trace_id","trace_name")
);
--> statement-breakpoint
CREATE TABLE "queen"."message_traces" (
	"id" uuid PRIMARY KEY NOT NULL,
	"queue_id" bigint NOT NULL,
	"partition_id" bigint NOT NULL,
	"msg_offset" bigint,
	"transaction_id" text NOT NULL,
	"consumer_group" text NOT NULL,
	"event_type" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "queen"."message_trace_names" ADD CONSTRAINT "message_trace_names_trace_id_message_traces_id_fk" FOREIGN KEY ("trace_id") REFERENCES "queen"."message_traces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "queen"."message_traces" ADD CONSTRAINT "message_traces_queue_id_queues_id_fk" FOREIGN KEY ("queue_id") REFERENCES "queen"."queues"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "idx_message_trace_names_name" ON "queen"."message_trace_names" USING btree ("tenant_id","trace_name","created_at");--> statement-breakpoint
CREATE INDEX "idx_message_traces_message" ON "queen"."message_traces" USING btree ("queue_id","partition_id","transaction_id","created_at");--> statement-breakpoint
CREATE INDEX "idx_message_traces_created_at" ON "queen"."message_traces" USING btree ("created_at");