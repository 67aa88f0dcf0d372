-- The store identity workspace $1's store, spelled as the legacy id $2,
-- last went by.
SELECT store_id FROM store_ids WHERE workspace_id = $1 AND legacy_id = $2
