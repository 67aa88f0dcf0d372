-- Records that workspace $1's store, spelled as the legacy id $2, is the
-- store identity $3.
INSERT INTO store_ids (workspace_id, legacy_id, store_id) VALUES ($1, $2, $3)
ON CONFLICT (workspace_id, legacy_id) DO UPDATE SET store_id = excluded.store_id
