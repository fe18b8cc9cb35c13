//! A PostgreSQL database of a test's own.

use sqlx::Connection;

/// A database of its own on the server, dropped by [`Database::drop_it`].
pub struct Database {
    name: String,
    server: String,
    pub url: String,
}

impl Database {
    pub async fn create(server: &str) -> Database {
        sqlx::any::install_default_drivers();
        let name = format!("library_test_{}", &protoapi_runtime::uidp::new_root()[..16]);
        let mut connection = sqlx::AnyConnection::connect(server).await.unwrap();
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut connection)
            .await
            .unwrap();
        connection.close().await.ok();
        let (address, query) = server.split_once('?').unwrap_or((server, ""));
        let (root, _) = address.rsplit_once('/').expect("a database URL");
        let query = if query.is_empty() {
            String::new()
        } else {
            format!("?{query}")
        };
        Database {
            url: format!("{root}/{name}{query}"),
            name,
            server: server.to_owned(),
        }
    }

    pub async fn drop_it(self) {
        if let Ok(mut connection) = sqlx::AnyConnection::connect(&self.server).await {
            let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .execute(&mut connection)
                .await
                .ok();
        }
    }
}
