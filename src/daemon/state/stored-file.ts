/** A file of the file store: an upload, or a file a node made (voiceTask's audio). */
export interface StoredFile {
  readonly fileId: string;
  readonly organization: string;
  readonly name: string;
  readonly mimeType: string;
  readonly bytes: number;
  /** Hex SHA-256 of the content: the blob's name. */
  readonly sha256: string;
  readonly createdAt: string;
  /** When retention removes it, unless a running execution refers to it then (it is kept longer). */
  readonly expiresAt: string;
}
