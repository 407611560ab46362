import type { Migration } from "kysely";
import { initial } from "./0001-initial.js";
import { resourceValues } from "./0002-resource-values.js";
import { oauth } from "./0003-oauth.js";
import { passwordResets } from "./0004-password-resets.js";
import { signingKeys } from "./0005-signing-keys.js";
import { mailQueue } from "./0006-mail-queue.js";
import { accountActivity } from "./0007-account-activity.js";
import { eventsKeyset } from "./0008-events-keyset.js";
import { sessionDetails } from "./0010-session-details.js";
import { supportInvitations } from "./0011-support-invitations.js";
import { oauthWeb } from "./0012-oauth-web.js";
import { audit } from "./0013-audit.js";
import { eventImports } from "./0014-event-imports.js";
import { mailJobs } from "./0016-mail-jobs.js";
import { oauthNoncesByTime } from "./0017-oauth-nonces-by-time.js";
import { eventsTypeCount } from "./0018-events-type-count.js";
import { credentialIssuers } from "./0019-credential-issuers.js";
import { linksMadeWhenSent } from "./0020-links-made-when-sent.js";
import { eventImportVisibility } from "./0021-event-import-visibility.js";
import { lastFailedLogin } from "./0022-last-failed-login.js";
import { externalIdUnique } from "./0023-external-id-unique.js";
import { resourceTypeCount } from "./0024-resource-type-count.js";
import { valuePrefixIndex } from "./0025-value-prefix-index.js";
import { valueTrigramIndex } from "./0026-value-trigram-index.js";
import { valueTrigramSearch } from "./0027-value-trigram-search.js";
import { totpFactors } from "./0028-totp-factors.js";
import { apiTokens } from "./0029-api-tokens.js";
import { auditApiToken } from "./0030-audit-api-token.js";
import { eventCountsPerStatement } from "./0031-event-counts-per-statement.js";
import { valueTrigramStrings } from "./0032-value-trigram-strings.js";
import { userActiveCount } from "./0033-user-active-count.js";
import { eventsTiesFollowOrder } from "./0034-events-ties-follow-order.js";
import { userNamesNfc } from "./0035-user-names-nfc.js";
import { groups } from "./0036-groups.js";
import { serviceAccounts } from "./0037-service-accounts.js";
import { deletedUsers } from "./0038-deleted-users.js";
import { addressesByDelegate } from "./0040-addresses-by-delegate.js";
import { deletedGroups } from "./0041-deleted-groups.js";
import { userSearchRows } from "./0042-user-search-rows.js";

/**
 * Every migration, under the name kysely_migration records for it (which never changes: a renamed
 * entry would run again on every existing database). Each is a module imported here, not a file
 * read at run time, so that the bundled CLI carries them. Append only: a new migration is a new
 * module and a new last line (the numbers skip 0009 and 0015, as they always have).
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  "0001_initial": initial,
  "0002_resource_values": resourceValues,
  "0003_oauth": oauth,
  "0004_password_resets": passwordResets,
  "0005_signing_keys": signingKeys,
  "0006_mail_queue": mailQueue,
  "0007_account_activity": accountActivity,
  "0008_events_keyset": eventsKeyset,
  "0010_session_details": sessionDetails,
  "0011_support_invitations": supportInvitations,
  "0012_oauth_web": oauthWeb,
  "0013_audit": audit,
  "0014_event_imports": eventImports,
  "0016_mail_jobs": mailJobs,
  "0017_oauth_nonces_by_time": oauthNoncesByTime,
  "0018_events_type_count": eventsTypeCount,
  "0019_credential_issuers": credentialIssuers,
  "0020_links_made_when_sent": linksMadeWhenSent,
  "0021_event_import_visibility": eventImportVisibility,
  "0022_last_failed_login": lastFailedLogin,
  "0023_external_id_unique": externalIdUnique,
  "0024_resource_type_count": resourceTypeCount,
  "0025_value_prefix_index": valuePrefixIndex,
  "0026_value_trigram_index": valueTrigramIndex,
  "0027_value_trigram_search": valueTrigramSearch,
  "0028_totp_factors": totpFactors,
  "0029_api_tokens": apiTokens,
  "0030_audit_api_token": auditApiToken,
  "0031_event_counts_per_statement": eventCountsPerStatement,
  "0032_value_trigram_strings": valueTrigramStrings,
  "0033_user_active_count": userActiveCount,
  "0034_events_ties_follow_order": eventsTiesFollowOrder,
  "0035_user_names_nfc": userNamesNfc,
  "0036_groups": groups,
  "0037_service_accounts": serviceAccounts,
  "0038_deleted_users": deletedUsers,
  "0040_addresses_by_delegate": addressesByDelegate,
  "0041_deleted_groups": deletedGroups,
  "0042_user_search_rows": userSearchRows,
};
