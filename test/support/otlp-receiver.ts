import { createServer, type Server } from 'node:http';

/**
 * An OTLP/HTTP trace receiver for tests (https://opentelemetry.io/docs/specs/otlp/#otlphttp): it accepts
 * `POST /v1/traces` with an `ExportTraceServiceRequest` in binary protobuf (`application/x-protobuf`) or in
 * OTLP JSON (`application/json`), decodes it by the message definitions of opentelemetry-proto
 * (collector/trace/v1/trace_service.proto, trace/v1/trace.proto, common/v1/common.proto,
 * resource/v1/resource.proto) with a wire-format reader written here, and keeps every span it received.
 */

export type AttrValue = string | boolean | number | AttrValue[] | { [k: string]: AttrValue } | Uint8Array | null;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** Span.SpanKind: 1 INTERNAL, 2 SERVER, 3 CLIENT, … (0 unspecified). */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttrValue>;
  /** Status.StatusCode: 0 UNSET, 1 OK, 2 ERROR. */
  status: { code: number; message: string };
  resource: Record<string, AttrValue>;
  scope: { name: string; version: string };
}

export interface OtlpReceiver {
  url: string;
  /** The endpoint to put in OTEL_EXPORTER_OTLP_ENDPOINT (the exporter appends /v1/traces). */
  endpoint: string;
  spans: ReceivedSpan[];
  requests: { contentType: string; headers: Record<string, string | string[] | undefined>; spans: number }[];
  /** Answer the next `n` requests with this status (e.g. 503) instead of accepting them. */
  failNext(n: number, status?: number): void;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpReceiver['requests'] = [];
  let failing = 0;
  let failStatus = 503;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') { res.writeHead(404).end(); return; }
      if (failing > 0) { failing--; res.writeHead(failStatus, { 'content-type': 'text/plain' }).end('unavailable'); return; }
      const body = Buffer.concat(chunks);
      const type = String(req.headers['content-type'] ?? '').split(';')[0].trim();
      let got: ReceivedSpan[];
      try {
        if (type === 'application/x-protobuf') got = decodeExportTraceServiceRequest(body);
        else if (type === 'application/json') got = decodeJsonRequest(JSON.parse(body.toString('utf8')));
        else { res.writeHead(415).end(); return; }
      } catch (e) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(e));
        return;
      }
      spans.push(...got);
      requests.push({ contentType: type, headers: req.headers, spans: got.length });
      // ExportTraceServiceResponse: empty (no partial_success) in the request's encoding.
      if (type === 'application/json') res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.alloc(0));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    requests,
    failNext(n, status = 503) { failing = n; failStatus = status; },
    close: () => new Promise((r) => { server.close(() => r()); server.closeAllConnections?.(); }),
  };
}

// ---- protobuf wire format (https://protobuf.dev/programming-guides/encoding/) ----

interface Field { no: number; wire: number; varint?: bigint; bytes?: Uint8Array; fixed64?: Buffer; fixed32?: Buffer }

function readFields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let r = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new Error('truncated varint');
      const b = buf[i++];
      r |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return r;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, varint: varint() });
    else if (wire === 1) { out.push({ no, wire, fixed64: Buffer.from(buf.subarray(i, i + 8)) }); i += 8; }
    else if (wire === 2) {
      const len = Number(varint());
      if (i + len > buf.length) throw new Error('truncated length-delimited field');
      out.push({ no, wire, bytes: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 5) { out.push({ no, wire, fixed32: Buffer.from(buf.subarray(i, i + 4)) }); i += 4; }
    else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const str = (f: Field) => Buffer.from(f.bytes!).toString('utf8');
const hex = (f: Field) => Buffer.from(f.bytes!).toString('hex');

/** common.v1.AnyValue: 1 string, 2 bool, 3 int, 4 double, 5 array, 6 kvlist, 7 bytes. */
function anyValue(buf: Uint8Array): AttrValue {
  for (const f of readFields(buf)) {
    switch (f.no) {
      case 1: return str(f);
      case 2: return f.varint !== 0n;
      case 3: return Number(BigInt.asIntN(64, f.varint!));
      case 4: return f.fixed64!.readDoubleLE(0);
      case 5: return readFields(f.bytes!).filter((x) => x.no === 1).map((x) => anyValue(x.bytes!));
      case 6: return keyValues(readFields(f.bytes!).filter((x) => x.no === 1));
      case 7: return f.bytes!;
    }
  }
  return null;
}

/** repeated common.v1.KeyValue { 1 key, 2 value }. */
function keyValues(fields: Field[]): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const kv of fields) {
    let key = '';
    let value: AttrValue = null;
    for (const f of readFields(kv.bytes!)) {
      if (f.no === 1) key = str(f);
      if (f.no === 2) value = anyValue(f.bytes!);
    }
    out[key] = value;
  }
  return out;
}

/**
 * collector.trace.v1.ExportTraceServiceRequest { 1 resource_spans }; ResourceSpans { 1 resource, 2 scope_spans };
 * Resource { 1 attributes }; ScopeSpans { 1 scope, 2 spans }; InstrumentationScope { 1 name, 2 version };
 * Span { 1 trace_id, 2 span_id, 3 trace_state, 4 parent_span_id, 5 name, 6 kind, 7 start_time_unix_nano (fixed64),
 * 8 end_time_unix_nano (fixed64), 9 attributes, 15 status }; Status { 2 message, 3 code }.
 */
export function decodeExportTraceServiceRequest(body: Uint8Array): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of readFields(body).filter((f) => f.no === 1)) {
    let resource: Record<string, AttrValue> = {};
    const fields = readFields(rs.bytes!);
    for (const f of fields) if (f.no === 1) resource = keyValues(readFields(f.bytes!).filter((x) => x.no === 1));
    for (const ss of fields.filter((f) => f.no === 2)) {
      const scope = { name: '', version: '' };
      const ssFields = readFields(ss.bytes!);
      for (const f of ssFields) {
        if (f.no !== 1) continue;
        for (const s of readFields(f.bytes!)) {
          if (s.no === 1) scope.name = str(s);
          if (s.no === 2) scope.version = str(s);
        }
      }
      for (const sp of ssFields.filter((f) => f.no === 2)) {
        const span: ReceivedSpan = {
          traceId: '', spanId: '', parentSpanId: '', name: '', kind: 0, startNs: 0n, endNs: 0n, attributes: {},
          status: { code: 0, message: '' }, resource, scope,
        };
        const attrs: Field[] = [];
        for (const f of readFields(sp.bytes!)) {
          switch (f.no) {
            case 1: span.traceId = hex(f); break;
            case 2: span.spanId = hex(f); break;
            case 4: span.parentSpanId = hex(f); break;
            case 5: span.name = str(f); break;
            case 6: span.kind = Number(f.varint); break;
            case 7: span.startNs = f.fixed64!.readBigUInt64LE(0); break;
            case 8: span.endNs = f.fixed64!.readBigUInt64LE(0); break;
            case 9: attrs.push(f); break;
            case 15:
              for (const s of readFields(f.bytes!)) {
                if (s.no === 2) span.status.message = str(s);
                if (s.no === 3) span.status.code = Number(s.varint);
              }
              break;
          }
        }
        span.attributes = keyValues(attrs);
        out.push(span);
      }
    }
  }
  return out;
}

// ---- OTLP/JSON (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): IDs as hex, enums as integers ----

function jsonAny(v: any): AttrValue {
  if (v == null) return null;
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('arrayValue' in v) return (v.arrayValue.values ?? []).map(jsonAny);
  if ('kvlistValue' in v) return jsonKv(v.kvlistValue.values ?? []);
  if ('bytesValue' in v) return Buffer.from(v.bytesValue, 'base64');
  return null;
}
const jsonKv = (list: any[]) => Object.fromEntries((list ?? []).map((kv) => [kv.key, jsonAny(kv.value)]));

function decodeJsonRequest(body: any): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const resource = jsonKv(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      const scope = { name: ss.scope?.name ?? '', version: ss.scope?.version ?? '' };
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, kind: s.kind ?? 0,
          startNs: BigInt(s.startTimeUnixNano), endNs: BigInt(s.endTimeUnixNano), attributes: jsonKv(s.attributes),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' }, resource, scope,
        });
      }
    }
  }
  return out;
}
