export declare const REQUIRED_NODE: string;
export declare function nodeVersionSupported(version: string): boolean;
export declare function unsupportedNodeMessage(version: string, command: string): string;
