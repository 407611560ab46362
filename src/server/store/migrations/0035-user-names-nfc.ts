import { type Kysely, type Migration, sql } from "kysely";

interface UserRow {
  id: string;
  user_name_key: string;
  attributes: string;
}

/** A User's key (contract/resources.ts userNameKey), as of this migration. */
const keyOf = (userName: string) => userName.normalize("NFC").toLowerCase();

export const userNamesNfc: Migration = {
  async up(db: Kysely<unknown>) {
    // User names are now stored in NFC and compared as NFC lower-cased: the rows whose name was
    // sent decomposed get their NFC name and key. A row whose NFC key another User already holds
    // (`josé` twice, once decomposed) is left as it was rather than failing the upgrade: both go
    // on working by id, and the operator is told which to rename (docs/operations.md).
    const { rows } = await sql<UserRow>`select id, user_name_key, attributes from resources
      where resource_type = 'User' and user_name_key is not null`.execute(db);
    const holder = new Map(rows.map((row) => [row.user_name_key, row.id]));
    const colliding: { id: string; userName: string; with: string }[] = [];
    for (const row of rows) {
      const attributes = JSON.parse(row.attributes) as { userName?: unknown };
      if (typeof attributes.userName !== "string") continue;
      const userName = attributes.userName.normalize("NFC");
      const key = keyOf(userName);
      if (userName === attributes.userName && key === row.user_name_key) continue;
      const other = holder.get(key);
      if (other !== undefined && other !== row.id) {
        colliding.push({ id: row.id, userName: attributes.userName, with: other });
        continue;
      }
      holder.delete(row.user_name_key);
      holder.set(key, row.id);
      const text = JSON.stringify({ ...attributes, userName });
      await sql`update resources set attributes = ${text}, user_name_key = ${key} where id = ${row.id}`.execute(db);
      await sql`update resource_values set text_value = ${key}
        where resource_id = ${row.id} and path = 'username' and kind = 's'`.execute(db);
    }
    if (colliding.length > 0) {
      // a migration has no logger; stderr reaches the operator of `server start` and `migrate`
      console.warn(
        `bizctl: ${colliding.length} User(s) share a user name with another once both are in Unicode NFC; they keep their names, and log in only once renamed. Rename each (bizctl users update ID --set userName=NEW): ${JSON.stringify(colliding)}`,
      );
    }
  },
};
