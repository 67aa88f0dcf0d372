-- Moves the alerts of workspace $1 kept under the legacy store id $2 to
-- the store's identity $3.
UPDATE alerts SET store_id = $3 WHERE workspace_id = $1 AND store_id = $2
