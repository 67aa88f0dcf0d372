-- How many alerts and intended posts of workspace $1 are kept under the
-- store id $2: whether a history already knows a store by that id.
SELECT (SELECT count(*) FROM alerts WHERE workspace_id = $1 AND store_id = $2)
     + (SELECT count(*) FROM outbox WHERE workspace_id = $1 AND store_id = $2)
