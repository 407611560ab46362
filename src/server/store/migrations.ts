import {
  type Kysely,
  type Migration,
  type MigrationProvider,
  type MigrationResultSet,
  Migrator,
  PostgresAdapter,
  sql,
} from "kysely";
import type { Schema } from "./schema.js";

/** Migrations are code, not files, so that the bundled CLI carries them. Append only. */
const migrations: Record<string, Migration> = {
  "0001_initial": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("resources")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("resource_type", "text", (c) => c.notNull())
        .addColumn("external_id", "text")
        .addColumn("display_name", "text")
        .addColumn("user_name_key", "text", (c) => c.unique())
        .addColumn("attributes", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("version", "integer", (c) => c.notNull())
        .execute();
      for (const column of ["resource_type", "external_id", "created_at", "updated_at"]) {
        await db.schema.createIndex(`resources_${column}_idx`).on("resources").column(column).execute();
      }

      await db.schema
        .createTable("credentials")
        .addColumn("user_id", "text", (c) => c.primaryKey().references("resources.id").onDelete("cascade"))
        .addColumn("password_hash", "text")
        .addColumn("first_login", "integer", (c) => c.notNull())
        .addColumn("failed_logins", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("locked_until", "text")
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();

      await db.schema
        .createTable("sessions")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("user_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .addColumn("revoked_at", "text")
        .execute();
      await db.schema.createIndex("sessions_user_id_idx").on("sessions").column("user_id").execute();
      await db.schema.createIndex("sessions_expires_at_idx").on("sessions").column("expires_at").execute();

      await db.schema
        .createTable("events")
        .addColumn("code_key", "text", (c) => c.primaryKey())
        .addColumn("code", "text", (c) => c.notNull())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("description", "text")
        .addColumn("type", "text")
        .addColumn("starts_at", "text", (c) => c.notNull())
        .addColumn("ends_at", "text")
        .addColumn("all_day", "integer")
        .addColumn("location", "text")
        .addColumn("organizer", "text")
        .addColumn("attendees", "text")
        .addColumn("tags", "text")
        .addColumn("custom_fields", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("created_by", "text")
        .addColumn("version", "integer", (c) => c.notNull())
        .execute();
      // every sortable field gets an index whose tie-breaker is the unique key, as the list orders by it
      for (const column of [
        "name",
        "type",
        "starts_at",
        "ends_at",
        "all_day",
        "location",
        "organizer",
        "created_at",
        "updated_at",
        "created_by",
      ]) {
        await db.schema.createIndex(`events_${column}_idx`).on("events").columns([column, "code_key"]).execute();
      }
    },
  },
  "0002_resource_values": {
    async up(db: Kysely<unknown>) {
      // every scalar of every resource, under its lower-cased path: filters and sorts run here, indexed
      await db.schema
        .createTable("resource_values")
        .addColumn("resource_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
        .addColumn("path", "text", (c) => c.notNull())
        .addColumn("elem", "integer")
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("text_value", "text")
        .addColumn("num_value", "double precision")
        .execute();
      await db.schema
        .createIndex("resource_values_text_idx")
        .on("resource_values")
        .columns(["path", "text_value"])
        .execute();
      await db.schema
        .createIndex("resource_values_num_idx")
        .on("resource_values")
        .columns(["path", "num_value"])
        .execute();
      await db.schema
        .createIndex("resource_values_owner_idx")
        .on("resource_values")
        .columns(["resource_id", "path"])
        .execute();
      await db.schema
        .createTable("resource_secrets")
        .addColumn("resource_id", "text", (c) => c.primaryKey().references("resources.id").onDelete("cascade"))
        .addColumn("secret", "text", (c) => c.notNull())
        .execute();
    },
  },
  "0003_oauth": {
    async up(db: Kysely<unknown>) {
      // the OAuth 1.0a provider: accepted nonces, temporary credentials, token credentials
      await db.schema
        .createTable("oauth_nonces")
        .addColumn("consumer_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
        .addColumn("token", "text", (c) => c.notNull())
        .addColumn("nonce", "text", (c) => c.notNull())
        .addColumn("ts", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("oauth_nonces_pk", ["consumer_id", "token", "nonce", "ts"])
        .execute();
      await db.schema.createIndex("oauth_nonces_expires_at_idx").on("oauth_nonces").column("expires_at").execute();

      await db.schema
        .createTable("oauth_temporary_credentials")
        .addColumn("token", "text", (c) => c.primaryKey())
        .addColumn("secret", "text", (c) => c.notNull())
        .addColumn("consumer_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
        .addColumn("callback", "text", (c) => c.notNull())
        .addColumn("verifier_hash", "text")
        .addColumn("user_id", "text", (c) => c.references("resources.id").onDelete("cascade"))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .addColumn("authorized_at", "text")
        .addColumn("used_at", "text")
        .execute();
      for (const column of ["consumer_id", "user_id", "expires_at"]) {
        await db.schema
          .createIndex(`oauth_temporary_credentials_${column}_idx`)
          .on("oauth_temporary_credentials")
          .column(column)
          .execute();
      }

      await db.schema
        .createTable("oauth_tokens")
        .addColumn("token", "text", (c) => c.primaryKey())
        .addColumn("secret", "text", (c) => c.notNull())
        .addColumn("consumer_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
        .addColumn("user_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
        .addColumn("session_id", "text", (c) => c.notNull().unique().references("sessions.id").onDelete("cascade"))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .execute();
      for (const column of ["consumer_id", "user_id"]) {
        await db.schema.createIndex(`oauth_tokens_${column}_idx`).on("oauth_tokens").column(column).execute();
      }
    },
  },
  "0004_password_resets": {
    async up(db: Kysely<unknown>) {
      // only a hash of each token is kept: a copy of the database cannot reset anyone's password
      await db.schema
        .createTable("password_resets")
        .addColumn("token_hash", "text", (c) => c.primaryKey())
        .addColumn("user_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .addColumn("used_at", "text")
        .execute();
      await db.schema.createIndex("password_resets_user_idx").on("password_resets").column("user_id").execute();
    },
  },
  "0005_signing_keys": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("signing_keys")
        .addColumn("kid", "text", (c) => c.primaryKey())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("sign_from", "text", (c) => c.notNull())
        .addColumn("sealed_private_jwk", "text", (c) => c.notNull())
        .execute();
    },
  },
  "0006_mail_queue": {
    async up(db: Kysely<unknown>) {
      // outgoing mail lives in the database, so that any instance may send it and a restart loses none
      await db.schema
        .createTable("mail_queue")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("recipient", "text", (c) => c.notNull())
        .addColumn("subject", "text", (c) => c.notNull())
        .addColumn("body_text", "text")
        .addColumn("body_html", "text")
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("next_attempt_at", "text", (c) => c.notNull())
        .addColumn("claimed_until", "text")
        .addColumn("claimed_by", "text")
        .addColumn("last_error", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("sent_at", "text")
        .execute();
      await db.schema
        .createIndex("mail_queue_due_idx")
        .on("mail_queue")
        .columns(["status", "next_attempt_at"])
        .execute();
      await db.schema.createIndex("mail_queue_sent_at_idx").on("mail_queue").column("sent_at").execute();
    },
  },
  "0007_account_activity": {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("credentials").addColumn("last_login_at", "text").execute();
      await db.schema.alterTable("credentials").addColumn("password_changed_at", "text").execute();
    },
  },
  "0008_events_keyset": {
    async up(db: Kysely<unknown>) {
      // keyset pages walk an index in the list's order: these are the orders 0001's indexes do not
      // serve (plans in docs/events-keyset.md). -startsAt keeps code ascending as its tie-breaker,
      // so it needs its own mixed-direction index; a type filter compares lower(type).
      await sql`create index events_starts_at_desc_idx on events (starts_at desc, code_key)`.execute(db);
      // type itself last: the filter also tests `type is not null`, so the filtered count reads the index alone
      await sql`create index events_type_keyset_idx on events (lower(type), starts_at, code_key, type)`.execute(db);
      // the unfiltered total of every page-based list: a count(*) of a million rows is a scan;
      // triggers keep it exact in the writing transaction, whoever writes. The total is the sum of
      // slots: on PostgreSQL each connection adds to its own (backend pid mod 16), so that writers
      // on other connections and instances (a long import transaction too) do not queue on one row
      await sql`create table events_count (id integer primary key, n bigint not null)`.execute(db);
      await sql`insert into events_count (id, n) select 0, count(*) from events`.execute(db);
      if (db.getExecutor().adapter instanceof PostgresAdapter) {
        await sql`insert into events_count (id, n) select slot, 0 from generate_series(1, 15) as slot`.execute(db);
        await sql`create function events_count_change() returns trigger language plpgsql as $$
          begin
            update events_count set n = n + (case when tg_op = 'INSERT' then 1 else -1 end)
              where id = pg_backend_pid() % 16;
            return null;
          end $$`.execute(db);
        await sql`create trigger events_count_change after insert or delete on events
          for each row execute function events_count_change()`.execute(db);
      } else {
        // one writer at a time on SQLite: one slot
        await sql`create trigger events_count_insert after insert on events
          begin update events_count set n = n + 1 where id = 0; end`.execute(db);
        await sql`create trigger events_count_delete after delete on events
          begin update events_count set n = n - 1 where id = 0; end`.execute(db);
      }
    },
  },
  "0010_session_details": {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("sessions").addColumn("client_ip", "text").execute();
      await db.schema.alterTable("sessions").addColumn("user_agent", "text").execute();
      await db.schema.alterTable("sessions").addColumn("last_used_at", "text").execute();
    },
  },
  "0011_support_invitations": {
    async up(db: Kysely<unknown>) {
      // an invitation is a single-use link like a reset, so it shares the table and PUT /resetPassword
      await db.schema.alterTable("password_resets").addColumn("purpose", "text").execute();
    },
  },
  "0012_oauth_web": {
    async up(db: Kysely<unknown>) {
      // the browser authorization page: each form it serves carries a single-use token bound to
      // the temporary credentials; only its hash is kept, and it goes with them
      await db.schema
        .createTable("oauth_page_forms")
        .addColumn("token_hash", "text", (c) => c.primaryKey())
        .addColumn("temporary_token", "text", (c) =>
          c.notNull().references("oauth_temporary_credentials.token").onDelete("cascade"),
        )
        .addColumn("expires_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("oauth_page_forms_temporary_idx")
        .on("oauth_page_forms")
        .column("temporary_token")
        .execute();
      // connected applications show when a grant was last used (written at most once a minute)
      await db.schema.alterTable("oauth_tokens").addColumn("last_used_at", "text").execute();
    },
  },
  "0013_audit": {
    async up(db: Kysely<unknown>) {
      // append-only: no code path updates a row; rows leave only by retention, which deletes by id
      // range (ids sort in time order), so no index on time: each index is a page more per commit
      await db.schema
        .createTable("audit_log")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("time", "text", (c) => c.notNull())
        .addColumn("actor_id", "text")
        .addColumn("actor_user_name", "text")
        .addColumn("actor_consumer_id", "text")
        .addColumn("action", "text", (c) => c.notNull())
        .addColumn("target_type", "text")
        .addColumn("target_id", "text")
        .addColumn("target_name", "text")
        .addColumn("outcome", "text", (c) => c.notNull())
        .addColumn("request_id", "text")
        .addColumn("client_ip", "text")
        .addColumn("user_agent", "text")
        .addColumn("details", "text")
        .execute();
      // a member's view: the records where they are the actor or the target, newest first
      await db.schema.createIndex("audit_log_actor_idx").on("audit_log").columns(["actor_id", "id"]).execute();
      await db.schema.createIndex("audit_log_target_idx").on("audit_log").columns(["target_id", "id"]).execute();
    },
  },
  "0014_event_imports": {
    async up(db: Kysely<unknown>) {
      // an atomic import stages its events here, request by request, and writes them all in one
      // transaction at its commit: a file larger than one request is still all or nothing, remote too
      await db.schema
        .createTable("event_imports")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("created_by", "text", (c) => c.notNull())
        .addColumn("on_conflict", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("next_seq", "integer", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("event_import_items")
        .addColumn("import_id", "text", (c) => c.notNull().references("event_imports.id").onDelete("cascade"))
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("ref", "integer")
        .addColumn("body", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("event_import_items_pk", ["import_id", "seq"])
        .execute();
    },
  },
  "0016_mail_jobs": {
    async up(db: Kysely<unknown>) {
      // the queue also carries work for the sender to do off the request path (a reset asked for
      // by name or address, resolved into a token and its e-mail, or into nothing), not only mail
      await db.schema
        .alterTable("mail_queue")
        .addColumn("kind", "text", (c) => c.notNull().defaultTo("message"))
        .execute();
    },
  },
  "0017_oauth_nonces_by_time": {
    async up(db: Kysely<unknown>) {
      // A signed request's one write. Keyed by timestamp first, a new nonce lands beside the
      // last ones (clients sign at about the server's time) instead of at a random place in the
      // key, and expiry is that key's prefix, so the separate expiry index (a second B-tree
      // written by every nonce) goes: about half the cost of a nonce write.
      // The accepted nonces are copied, so an upgrade does not reopen the replay window.
      const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
      const table = db.schema
        .createTable("oauth_nonces_by_time")
        .addColumn("ts", "bigint", (c) => c.notNull())
        .addColumn("consumer_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
        .addColumn("token", "text", (c) => c.notNull())
        .addColumn("nonce", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("oauth_nonces_by_time_pk", ["ts", "consumer_id", "token", "nonce"]);
      // SQLite: the key is the table (no rowid B-tree beside it)
      await (postgres ? table : table.modifyEnd(sql`without rowid`)).execute();
      await sql`insert into oauth_nonces_by_time (ts, consumer_id, token, nonce)
        select cast(ts as bigint), consumer_id, token, nonce from oauth_nonces`.execute(db);
      await db.schema.dropTable("oauth_nonces").execute();
      await db.schema.alterTable("oauth_nonces_by_time").renameTo("oauth_nonces").execute();
    },
  },
  "0018_events_type_count": {
    async up(db: Kysely<unknown>) {
      // The total of a page filtered by `type eq "…"` (the list's commonest filter) counted every
      // matching index entry: a fifth of a million events took longer than the page itself.
      // Triggers keep the number of events of each type (by lower(type), the key the filter
      // compares) in the writing transaction, as events_count does for all of them; on
      // PostgreSQL in slots per connection, for the same reason.
      await sql`create table events_type_count (type_key text not null, slot integer not null, n bigint not null,
        primary key (type_key, slot))`.execute(db);
      await sql`insert into events_type_count (type_key, slot, n)
        select lower(type), 0, count(*) from events where type is not null group by lower(type)`.execute(db);
      if (db.getExecutor().adapter instanceof PostgresAdapter) {
        await sql`create function events_type_count_change() returns trigger language plpgsql as $$
          declare
            own_slot integer := pg_backend_pid() % 16;
          begin
            if tg_op = 'UPDATE' and lower(old.type) is not distinct from lower(new.type) then
              return null;
            end if;
            if tg_op in ('DELETE', 'UPDATE') and old.type is not null then
              insert into events_type_count as c (type_key, slot, n) values (lower(old.type), own_slot, -1)
                on conflict (type_key, slot) do update set n = c.n - 1;
            end if;
            if tg_op in ('INSERT', 'UPDATE') and new.type is not null then
              insert into events_type_count as c (type_key, slot, n) values (lower(new.type), own_slot, 1)
                on conflict (type_key, slot) do update set n = c.n + 1;
            end if;
            return null;
          end $$`.execute(db);
        await sql`create trigger events_type_count_change after insert or delete or update of type on events
          for each row execute function events_type_count_change()`.execute(db);
      } else {
        // one writer at a time on SQLite: one slot; a type's row exists from its first event on
        await sql`create trigger events_type_count_insert after insert on events when new.type is not null
          begin
            insert into events_type_count (type_key, slot, n) values (lower(new.type), 0, 1)
              on conflict (type_key, slot) do update set n = n + 1;
          end`.execute(db);
        await sql`create trigger events_type_count_delete after delete on events when old.type is not null
          begin
            update events_type_count set n = n - 1 where type_key = lower(old.type) and slot = 0;
          end`.execute(db);
        await sql`create trigger events_type_count_update after update of type on events
          when lower(old.type) is not lower(new.type)
          begin
            update events_type_count set n = n - 1 where type_key = lower(old.type) and slot = 0;
            insert into events_type_count (type_key, slot, n) select lower(new.type), 0, 1 where new.type is not null
              on conflict (type_key, slot) do update set n = n + 1;
          end`.execute(db);
      }
    },
  },
  "0019_credential_issuers": {
    async up(db: Kysely<unknown>) {
      // who issued a password the user did not choose, and a reset or invitation link: the role it
      // was issued under (null: the user's own), and for a link the account's stamp at issue
      await db.schema.alterTable("credentials").addColumn("issuer_role", "text").execute();
      await db.schema.alterTable("password_resets").addColumn("issuer_role", "text").execute();
      await db.schema.alterTable("password_resets").addColumn("account_stamp", "text").execute();
      // a temporary password pending on an ordinary account may have come from support: it is
      // taken as support's, so that a later promotion voids it (the issuer was never recorded)
      await sql`update credentials set issuer_role = 'support'
        where first_login = 1 and password_hash is not null and not exists (
          select 1 from resource_values v where v.resource_id = credentials.user_id
            and v.path = 'roles.value' and v.text_value in ('admin', 'support'))`.execute(db);
    },
  },
  "0020_links_made_when_sent": {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("password_resets").addColumn("mail_id", "text").execute();
      await db.schema.createIndex("password_resets_mail_idx").on("password_resets").column("mail_id").execute();
    },
  },
  "0021_event_import_visibility": {
    async up(db: Kysely<unknown>) {
      // An atomic import writes its events in short transactions, hidden (import_id set), and
      // shows them all at once by clearing import_id: other writers wait for a chunk at a time,
      // never for the whole import. Readers, the counts and the triggers see visible rows only.
      await db.schema.alterTable("events").addColumn("import_id", "text").execute();
      await sql`create index events_import_idx on events (import_id) where import_id is not null`.execute(db);
      await db.schema
        .alterTable("event_imports")
        .addColumn("state", "text", (c) => c.notNull().defaultTo("open"))
        .execute();
      await db.schema
        .alterTable("event_imports")
        .addColumn("staged_bytes", "bigint", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable("event_imports").addColumn("commit_started_at", "text").execute();
      await db.schema.createIndex("event_imports_owner_idx").on("event_imports").column("created_by").execute();
      if (db.getExecutor().adapter instanceof PostgresAdapter) {
        await sql`create or replace function events_count_change() returns trigger language plpgsql as $$
          begin
            if (tg_op = 'INSERT' and new.import_id is not null) or (tg_op = 'DELETE' and old.import_id is not null) then
              return null;
            end if;
            update events_count set n = n + (case when tg_op = 'INSERT' then 1 else -1 end)
              where id = pg_backend_pid() % 16;
            return null;
          end $$`.execute(db);
        await sql`create or replace function events_type_count_change() returns trigger language plpgsql as $$
          declare
            own_slot integer := pg_backend_pid() % 16;
          begin
            if (tg_op = 'INSERT' and new.import_id is not null) or (tg_op <> 'INSERT' and old.import_id is not null) then
              return null;
            end if;
            if tg_op = 'UPDATE' and lower(old.type) is not distinct from lower(new.type) then
              return null;
            end if;
            if tg_op in ('DELETE', 'UPDATE') and old.type is not null then
              insert into events_type_count as c (type_key, slot, n) values (lower(old.type), own_slot, -1)
                on conflict (type_key, slot) do update set n = c.n - 1;
            end if;
            if tg_op in ('INSERT', 'UPDATE') and new.type is not null then
              insert into events_type_count as c (type_key, slot, n) values (lower(new.type), own_slot, 1)
                on conflict (type_key, slot) do update set n = c.n + 1;
            end if;
            return null;
          end $$`.execute(db);
        return;
      }
      for (const trigger of [
        "count_insert",
        "count_delete",
        "type_count_insert",
        "type_count_delete",
        "type_count_update",
      ]) {
        await sql`drop trigger ${sql.raw(`events_${trigger}`)}`.execute(db);
      }
      await sql`create trigger events_count_insert after insert on events when new.import_id is null
        begin update events_count set n = n + 1 where id = 0; end`.execute(db);
      await sql`create trigger events_count_delete after delete on events when old.import_id is null
        begin update events_count set n = n - 1 where id = 0; end`.execute(db);
      await sql`create trigger events_type_count_insert after insert on events
        when new.type is not null and new.import_id is null
        begin
          insert into events_type_count (type_key, slot, n) values (lower(new.type), 0, 1)
            on conflict (type_key, slot) do update set n = n + 1;
        end`.execute(db);
      await sql`create trigger events_type_count_delete after delete on events
        when old.type is not null and old.import_id is null
        begin
          update events_type_count set n = n - 1 where type_key = lower(old.type) and slot = 0;
        end`.execute(db);
      await sql`create trigger events_type_count_update after update of type on events
        when lower(old.type) is not lower(new.type) and old.import_id is null
        begin
          update events_type_count set n = n - 1 where type_key = lower(old.type) and slot = 0;
          insert into events_type_count (type_key, slot, n) select lower(new.type), 0, 1 where new.type is not null
            on conflict (type_key, slot) do update set n = n + 1;
        end`.execute(db);
    },
  },
  "0022_last_failed_login": {
    async up(db: Kysely<unknown>) {
      // failed logins are forgotten a day after the last one, for accounts as for unknown names
      await db.schema.alterTable("credentials").addColumn("last_failed_login_at", "text").execute();
      await sql`update credentials set last_failed_login_at = updated_at where failed_logins > 0`.execute(db);
    },
  },
};

class InlineProvider implements MigrationProvider {
  async getMigrations() {
    return migrations;
  }
}

/**
 * Whether every migration has run already: the common case, checked with one read. Kysely's
 * migrator first introspects every table of the schema and takes its lock, which cost an
 * embedded command more than the command itself. Anything else (no bookkeeping table yet, a
 * migration missing, or one this build does not know) is left to the migrator, as before.
 */
async function isUpToDate(db: Kysely<Schema>): Promise<boolean> {
  let done: string[];
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    done = rows.map((row) => row.name);
  } catch {
    return false;
  }
  const known = Object.keys(migrations);
  return done.length === known.length && known.every((name) => done.includes(name));
}

export async function migrateToLatest(db: Kysely<Schema>, dialect: "sqlite" | "postgres"): Promise<string[]> {
  if (await isUpToDate(db)) return [];
  return applied(await (await migratorFor(db, dialect)).migrateToLatest());
}

/** The names of every migration, in the order they run. */
export const migrationNames = (): string[] => Object.keys(migrations).sort();

/** Migrates a database up to the named migration: as an older build left it (tests of a migration). */
export async function migrateTo(db: Kysely<Schema>, dialect: "sqlite" | "postgres", name: string): Promise<string[]> {
  return applied(await (await migratorFor(db, dialect)).migrateTo(name));
}

async function migratorFor(db: Kysely<Schema>, dialect: "sqlite" | "postgres"): Promise<Migrator> {
  // on PostgreSQL the bookkeeping tables go where ours go (search_path), not always into public
  const migrationTableSchema =
    dialect === "postgres"
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined;
  return new Migrator({
    // biome-ignore lint/suspicious/noExplicitAny: the migrator works on an untyped schema
    db: db as Kysely<any>,
    provider: new InlineProvider(),
    ...(migrationTableSchema && { migrationTableSchema }),
  });
}

function applied({ error, results }: MigrationResultSet): string[] {
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

export async function ping(db: Kysely<Schema>): Promise<void> {
  await sql`select 1`.execute(db);
}
