//! The custom methods of `widgets.v1.DrawingService`, by hand: drawings
//! kept in memory by widget uid, and a feed of them.

use std::collections::BTreeMap;
use std::sync::Mutex;

use futures_util::{StreamExt, stream};
use protoapi_runtime::stream::{MessageStream, boxed};
use protoapi_runtime::{Caller, Code, Error};

use crate::google::api::HttpBody;
use crate::widgets::v1::{
    DownloadDrawingRequest, DrawingEvent, DrawingServiceHandler, UploadDrawingRequest,
    WatchDrawingsRequest,
};

/// The most drawings kept: memory is bounded like the request bodies.
const MAX_DRAWINGS: usize = 1000;
/// The largest chunk `StreamDrawing` sends.
const MAX_CHUNK_BYTES: i32 = 1 << 20;

/// Drawings in memory, by widget uid.
#[derive(Debug, Default)]
pub struct Drawings {
    drawings: Mutex<BTreeMap<String, HttpBody>>,
}

impl Drawings {
    /// Keeps `request`'s drawing, bounded by [`MAX_DRAWINGS`].
    fn store(&self, request: UploadDrawingRequest) -> Result<(), Error> {
        if request.widget.is_empty() {
            return Err(Error::invalid_field("widget", "required"));
        }
        let Some(drawing) = request.drawing else {
            return Err(Error::invalid_field("drawing", "required"));
        };
        let mut drawings = self.drawings.lock().expect("drawings lock");
        if drawings.len() >= MAX_DRAWINGS && !drawings.contains_key(&request.widget) {
            return Err(Error::new(
                Code::ResourceExhausted,
                "TOO_MANY_DRAWINGS",
                format!("at most {MAX_DRAWINGS} drawings are kept"),
            ));
        }
        drawings.insert(request.widget, drawing);
        Ok(())
    }

    fn get(&self, widget: &str) -> Result<HttpBody, Error> {
        if widget.is_empty() {
            return Err(Error::invalid_field("widget", "required"));
        }
        let drawings = self.drawings.lock().expect("drawings lock");
        drawings
            .get(widget)
            .cloned()
            .ok_or_else(|| Error::not_found("widgets.example/Drawing", widget))
    }
}

impl DrawingServiceHandler for Drawings {
    async fn upload_drawing(
        &self,
        _caller: &Caller,
        request: UploadDrawingRequest,
    ) -> Result<(), Error> {
        self.store(request)
    }

    async fn upload_drawings(
        &self,
        _caller: &Caller,
        mut requests: MessageStream<UploadDrawingRequest>,
    ) -> Result<DrawingEvent, Error> {
        let mut count = 0;
        // Each drawing is stored as it arrives; the first refusal (or a
        // broken stream) ends the call.
        while let Some(request) = requests.next().await {
            self.store(request?)?;
            count += 1;
        }
        Ok(DrawingEvent {
            size: count,
            ..DrawingEvent::default()
        })
    }

    async fn measure_drawings(
        &self,
        _caller: &Caller,
        requests: MessageStream<HttpBody>,
    ) -> Result<MessageStream<DrawingEvent>, Error> {
        Ok(boxed(requests.map(|drawing| {
            let drawing = drawing?;
            if drawing.content_type.is_empty() {
                return Err(Error::invalid_field("contentType", "required"));
            }
            Ok(DrawingEvent {
                size: i64::try_from(drawing.data.len()).unwrap_or(i64::MAX),
                content_type: drawing.content_type,
                ..DrawingEvent::default()
            })
        })))
    }

    async fn measure_drawing(
        &self,
        _caller: &Caller,
        request: HttpBody,
    ) -> Result<DrawingEvent, Error> {
        Ok(DrawingEvent {
            widget: String::new(),
            size: i64::try_from(request.data.len()).unwrap_or(i64::MAX),
            content_type: request.content_type,
            drawing: None,
        })
    }

    async fn download_drawing(
        &self,
        _caller: &Caller,
        request: DownloadDrawingRequest,
    ) -> Result<HttpBody, Error> {
        self.get(&request.widget)
    }

    async fn stream_drawing(
        &self,
        _caller: &Caller,
        request: DownloadDrawingRequest,
    ) -> Result<MessageStream<HttpBody>, Error> {
        let chunk_bytes = match request.chunk_bytes {
            0 => 1024,
            bytes if (1..=MAX_CHUNK_BYTES).contains(&bytes) => bytes,
            _ => {
                return Err(Error::invalid_field(
                    "chunkBytes",
                    format!("between 1 and {MAX_CHUNK_BYTES}"),
                ));
            }
        };
        let drawing = self.get(&request.widget)?;
        let mut content_type = Some(drawing.content_type);
        let chunks: Vec<Result<HttpBody, Error>> = drawing
            .data
            .chunks(usize::try_from(chunk_bytes).unwrap_or(1024))
            .map(|chunk| {
                Ok(HttpBody {
                    // The first chunk tells the content type.
                    content_type: content_type.take().unwrap_or_default(),
                    data: chunk.to_vec(),
                    extensions: Vec::new(),
                })
            })
            .collect();
        Ok(boxed(stream::iter(chunks)))
    }

    async fn watch_drawings(
        &self,
        _caller: &Caller,
        request: WatchDrawingsRequest,
    ) -> Result<MessageStream<DrawingEvent>, Error> {
        if request.fail_after < 0 {
            return Err(Error::invalid_field("failAfter", "not negative"));
        }
        let drawings = self.drawings.lock().expect("drawings lock");
        let mut events: Vec<Result<DrawingEvent, Error>> = drawings
            .iter()
            .filter(|(widget, _)| widget.starts_with(&request.parent))
            .map(|(widget, drawing)| {
                Ok(DrawingEvent {
                    widget: widget.clone(),
                    content_type: drawing.content_type.clone(),
                    size: i64::try_from(drawing.data.len()).unwrap_or(i64::MAX),
                    drawing: Some(drawing.clone()),
                })
            })
            .collect();
        if let Ok(after) = usize::try_from(request.fail_after)
            && after > 0
        {
            events.truncate(after);
            events.push(Err(Error::new(
                Code::Aborted,
                "FEED_INTERRUPTED",
                format!("the feed was interrupted after {after} events"),
            )));
        }
        Ok(boxed(stream::iter(events)))
    }
}
