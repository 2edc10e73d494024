/** The S3 side of snapshots: a client per destination, streamed uploads, read-back checks. */
export { s3Client, type S3Endpoint } from './client.ts';
export {
  abortOpenUploads,
  abortUploads,
  defaultPartSize,
  defaultPartsInFlight,
  openUploads,
  uploadMemory,
  uploadStream,
  type ObjectLocation,
  type OpenUpload,
  type UploadOptions,
  type UploadProgress,
} from './upload.ts';
export {
  defaultRangesInFlight,
  defaultRangeSize,
  readObject,
  verifyObject,
  type ReadBackOptions,
} from './read-back.ts';
